import type { NewEvent } from '@atlas/core';
import type { LagRow } from '@atlas/eventlog';
import type { Embedder } from '@atlas/providers';
import type { AskStore, DocumentStore, GraphStore, KeywordIndex, VectorStore, WikiStore } from '@atlas/stores';
import type { WikiGenerateResult, WikiPage, WikiStructure } from '@atlas/wiki';
import type { AskAttachment, AskLlm, AskPorts } from './ask/engine.js';
import type { AdminPorts } from './routes/admin.js';
import type { ConnectionPorts } from './routes/connections.js';
import type { StatsPorts } from './routes/stats.js';
import type { SyncPorts } from './routes/sync.js';
import type { SchedulePorts } from './routes/sync-schedules.js';
import type { GraphExpansion } from './search.js';
import type { TelemetrySources } from './telemetry.js';

/** A dependency's state as the spec's GET /api/health reports it. */
export type DependencyStatus = 'healthy' | 'degraded' | 'failing';

export interface HealthCheck {
  /** Spec names: vector_store, graph_store, document_store, llm_provider, embedding_provider, web_search_provider, plus event_log. */
  name: string;
  check(): Promise<DependencyStatus>;
}

/** What the query service reads: the read stores and health probes (nothing else). */
export interface ApiPorts {
  documents: DocumentStore;
  keyword: KeywordIndex;
  /** The knowledge graph (Postgres tables or Neo4j). */
  graph: GraphStore;
  /** Graph-expanded retrieval for search, when SEARCH_GRAPH_EXPANSION is on. */
  graphExpansion?: GraphExpansion | null;
  /** Drains the entity backlog (POST /api/admin/backfill/entities). */
  backfillEntities: () => Promise<{ processed: number; remaining: number }>;
  health: readonly HealthCheck[];
  /** Process start time (ms since epoch), for uptime. */
  startedAt: number;
  /** The embedder and vector store, or null when search is keyword-only (spec degraded mode). */
  vectors: { embedder: Embedder; store: VectorStore } | null;
  /** Drains the embedding backlog (POST /api/admin/backfill/embeddings); null without embeddings. */
  backfillEmbeddings: (() => Promise<{ processed: number; remaining: number }>) | null;
  /** The event log this deployment runs on, and the lag of every projector's consumer group. */
  eventLog: { kind: 'embedded' | 'kafka'; lag(): Promise<LagRow[]> };
  /** The wiki's stored pages, structure, versions and generation state (reads never generate). */
  wiki: WikiStore<WikiPage, WikiStructure>;
  /**
   * Generates one channel's wiki (generateChannelWiki over the documents, vectors, graph and wiki stores) and saves it
   * as a new version; null when there is no vector store (embeddings off), since clustering needs the fact vectors.
   */
  generateWiki: ((channelId: string, mode: 'full' | 'incremental') => Promise<WikiGenerateResult>) | null;
  /**
   * When the next daily full wiki rebuild is due (WIKI_REBUILD_CRON, run by the process that runs the wiki
   * projector), or null when it is off: GET /api/wiki/status next_generation_scheduled. Absent: null.
   */
  nextWikiRebuild?: () => Date | null;
  /**
   * Ask (spec "Ask"): the sessions store, the LLM tiers (null offline: extractive answers and regex routing), the
   * graph retrieval of `graph` / `both` routes (null: semantic only) and the per-client rate limit (asks per
   * minute; default ASK_RATE_LIMIT_PER_MINUTE). Absent: the ask routes are not registered.
   */
  ask?: {
    store: AskStore;
    llm: { quality: AskLlm | null; fast: AskLlm | null };
    graphRetrieval: GraphExpansion | null;
    rateLimitPerMinute?: number;
    /** Web search for external sub-queries (WEB_SEARCH_URL, 5 s breaker); absent or null: none configured. */
    webSearch?: AskPorts['webSearch'];
  };
  /**
   * Text (or an image) from an uploaded file or a base64 attachment (spec "POST /api/ask/upload": PDF, PNG, JPEG,
   * DOCX, TXT, CSV, 10 MB); throws an error with `status` 400, 413 or 415. Absent: attachments are refused.
   */
  extractAttachment?: (file: { name: string; contentType: string; data: Buffer }) => Promise<AskAttachment>;
  /**
   * Connections (spec "Connections"): the store (credentials encrypted under CREDENTIAL_MASTER_KEY) and the platform
   * client that validates credentials and lists a platform's channels. Absent: the connections routes are not
   * registered.
   */
  connections?: ConnectionPorts;
  /** Sync jobs (spec "Sync"): the job store, commands, connections. Absent: the sync routes are not registered. */
  sync?: SyncPorts;
  /** Sync schedules (spec "Sync schedule"): the store, last syncs, connections, commands. Absent: not registered. */
  schedules?: SchedulePorts;
  /**
   * Channel commands (spec "Channels": DELETE /api/channels/{channel_id}/data, PUT .../settings): appends a
   * ChannelDataDeleted or ChannelSettingsUpdated to atlas.messages and resolves once the projectors have applied it
   * (AtlasError STORE_UNAVAILABLE when they do not catch up in time). Absent: those routes are not registered.
   */
  channelCommands?: {
    append(command: NewEvent<'ChannelDataDeleted'> | NewEvent<'ChannelSettingsUpdated'>): Promise<void>;
  };
  /**
   * The stats projector's store and the connections (every /api/stats route but health). Absent: those routes answer
   * 404 and GET /api/stats/metrics reports no LLM usage, sync or wiki times.
   */
  stats?: StatsPorts;
  /** What Prometheus /metrics reads besides the request histogram and the lag (see TelemetrySources). */
  telemetry?: TelemetrySources;
  /** Write intents (POST /api/admin/reconcile, write-intents) and dead letters. Absent: those routes are not registered. */
  admin?: AdminPorts;
  /** BRIDGE_API_KEY: a request carrying another `x-atlas-bridge-key` is refused 401 (bridge-auth.ts). Absent: no check. */
  bridgeApiKey?: string | null;
}
