import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Transaction;
import org.neo4j.io.ByteUnit;
import org.neo4j.logging.Level;
import org.neo4j.logging.log4j.Log4jLogProvider;

/**
 * Embedded Neo4j 5.26 community with only its Bolt connector, for scripts/services (no Docker, no distribution tarball).
 *
 *   java [--add-opens ...] -Xmx512m -cp ".infra/neo4j/lib/*" infra/neo4j/Neo4jBolt.java <home> <data-dir> <logs-dir>
 *
 * (Java source-file mode as above, or compiled: scripts/services compiles it once into .infra/neo4j/launcher.)
 * On JDK 17 it also starts without any --add-opens, but debug.log then warns that the page cache uses a fallback
 * for direct buffers (java.nio) and that the transaction logs' native calls fail ("Incorrect file descriptor":
 * java.io, sun.nio.ch). scripts/services opens those three packages, which silences both.
 *
 * Bolt listens on -Datlas.neo4j.host (127.0.0.1) : -Datlas.neo4j.port (7687), unencrypted, with authentication off;
 * HTTP, HTTPS and the routing connector stay off, and nothing listens on another address. The page cache is
 * -Datlas.neo4j.pagecache MiB (128); transaction logs are not preallocated (they would take 512 MiB of disk on every
 * fresh start) and only the ones recovery needs are kept. The user log (start-up, warnings) goes to stdout; debug.log goes to <logs-dir>.
 * Once the default database "neo4j" answers a query it prints "atlas-neo4j: ready on bolt://host:port", which
 * scripts/services waits for. TERM (or Ctrl-C) shuts the databases down cleanly. When the start fails it prints the
 * stack trace and a one-line "atlas-neo4j: the database did not start: <causes>" to stderr, and exits 1.
 */
public final class Neo4jBolt {
  public static void main(final String[] args) throws InterruptedException {
    if (args.length < 1) {
      System.err.println("usage: Neo4jBolt <home> [data-dir] [logs-dir]");
      System.exit(2);
    }
    final Path home = Path.of(args[0]).toAbsolutePath();
    final Path data = args.length > 1 ? Path.of(args[1]).toAbsolutePath() : home.resolve("data");
    final Path logs = args.length > 2 ? Path.of(args[2]).toAbsolutePath() : home.resolve("logs");
    final String host = System.getProperty("atlas.neo4j.host", "127.0.0.1");
    final int port = Integer.getInteger("atlas.neo4j.port", 7687);
    final long pageCacheMiB = Long.getLong("atlas.neo4j.pagecache", 128L);

    final DatabaseManagementService dbms;
    try {
      Files.createDirectories(home); // Neo4j refuses to start when its home directory is missing
      dbms = new DatabaseManagementServiceBuilder(home)
          .setUserLogProvider(new Log4jLogProvider(System.out, Level.INFO))
          .setConfig(GraphDatabaseSettings.data_directory, data)
          .setConfig(GraphDatabaseSettings.logs_directory, logs)
          .setConfig(GraphDatabaseSettings.default_listen_address, new SocketAddress(host))
          .setConfig(GraphDatabaseSettings.default_advertised_address, new SocketAddress(host))
          .setConfig(BoltConnector.enabled, true)
          .setConfig(BoltConnector.listen_address, new SocketAddress(host, port))
          .setConfig(BoltConnector.advertised_address, new SocketAddress(host, port))
          .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
          .setConfig(HttpConnector.enabled, false)
          .setConfig(HttpsConnector.enabled, false)
          .setConfig(GraphDatabaseSettings.routing_enabled, false)
          .setConfig(GraphDatabaseSettings.auth_enabled, false)
          .setConfig(GraphDatabaseSettings.udc_enabled, false)
          .setConfig(GraphDatabaseSettings.filewatcher_enabled, false)
          // Transaction logs are otherwise preallocated at 256 MiB each (system + neo4j = 512 MiB on disk per start).
          .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
          .setConfig(GraphDatabaseSettings.logical_log_rotation_threshold, ByteUnit.mebiBytes(16))
          .setConfig(GraphDatabaseSettings.keep_logical_logs, "false")
          .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(pageCacheMiB))
          // A throwaway test server: TERM should not wait for Bolt's graceful netty shutdown (about 10 s by default).
          .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ZERO)
          .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
          .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout, Duration.ofSeconds(2))
          .build();
      // Fails here rather than in the first test when the default database cannot serve queries.
      final GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
      try (Transaction tx = db.beginTx()) {
        tx.execute("RETURN 1").close();
        tx.commit();
      }
    } catch (final Throwable t) {
      t.printStackTrace();
      final StringBuilder why = new StringBuilder();
      for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
        why.append(why.length() == 0 ? "" : " <- ").append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
      }
      System.err.println("atlas-neo4j: the database did not start: " + why);
      System.exit(1);
      return;
    }

    final CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      System.out.println("atlas-neo4j: shutting down");
      try {
        dbms.shutdown();
      } catch (final Throwable t) {
        t.printStackTrace();
      }
      stopped.countDown();
    }, "atlas-neo4j-shutdown"));
    System.out.println("atlas-neo4j: ready on bolt://" + host + ":" + port + " (auth disabled, page cache "
        + pageCacheMiB + " MiB, data " + data + ")");
    stopped.await();
  }
}
