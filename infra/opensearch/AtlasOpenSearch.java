import org.codelibs.opensearch.runner.OpenSearchRunner;

/**
 * Starts OpenSearchRunner with the command-line arguments scripts/services passes (-basePath, -confPath, -dataPath,
 * -numOfNode 1, -baseHttpPort, -clusterName) and stays up until the JVM is told to stop (TERM closes the node).
 * OpenSearchRunner's own main() exits 1 without saying why when the node cannot start (for example a port in use);
 * this one prints the stack trace and then a one-line "atlas-opensearch: the node did not start: <causes>" to stderr,
 * which scripts/services sends to .infra/opensearch/opensearch.log and repeats in its error message.
 */
public final class AtlasOpenSearch {
  public static void main(final String[] args) throws InterruptedException {
    final OpenSearchRunner runner = new OpenSearchRunner();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        runner.close();
      } catch (final Exception e) {
        e.printStackTrace();
      }
    }));
    try {
      runner.build(args);
    } catch (final Throwable t) {
      t.printStackTrace();
      final StringBuilder why = new StringBuilder();
      for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
        why.append(why.length() == 0 ? "" : " <- ").append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
      }
      System.err.println("atlas-opensearch: the node did not start: " + why);
      System.exit(1);
    }
    System.out.println("atlas-opensearch: node started");
    while (!runner.isClosed()) {
      Thread.sleep(2000);
    }
  }
}
