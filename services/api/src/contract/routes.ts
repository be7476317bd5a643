import { z } from 'zod';
import {
  AclRefreshResultSchema,
  ApiKeyCreatedSchema,
  ApiKeyListSchema,
  ApiKeySchema,
  AuditPageSchema,
  MeSchema,
} from './access.js';
import { AskFeedbackRecordedSchema, AskHistorySchema, AskSessionDetailSchema, AskSessionSummarySchema } from './ask.js';
import {
  ChannelDataDeletedSchema,
  ChannelDetailSchema,
  ChannelMessagesSchema,
  ChannelSchema,
  ChannelSettingsSchema,
} from './channels.js';
import {
  ConnectionChannelSchema,
  ConnectionChannelsUpdatedSchema,
  ConnectionCreatedSchema,
  ConnectionDetailSchema,
  ConnectionSchema,
  ConnectionValidationSchema,
  SyncCancelledSchema,
  SyncHistorySchema,
  SyncJobSchema,
  SyncScheduleSchema,
  SyncSchedulesSchema,
  SyncStartedSchema,
} from './connections.js';
import { ContradictionPageSchema, ContradictionSchema } from './contradictions.js';
import { LifecycleItemDetailSchema, LifecyclePageSchema } from './decisions.js';
import { DigestListSchema, DigestSchema } from './digests.js';
import {
  BackfillResultSchema,
  DeadLetterDetailSchema,
  DeadLetterPageSchema,
  DeadLetterRedriveAllSchema,
  DeadLetterRedriveSchema,
  ReconcileResultSchema,
  WriteIntentPageSchema,
  WriteIntentSchema,
} from './errors.js';
import {
  CardListEntrySchema,
  DecisionRecordSchema,
  EntityCardWithLifecycleSchema,
  GraphEntityDetailSchema,
  GraphEntitySchema,
  GraphPathSchema,
  NeighborsSchema,
  RelationshipSchema,
  SubgraphSchema,
} from './graph.js';
import { ImportJobListSchema, ImportJobSchema } from './imports.js';
import {
  MemoriesPageSchema,
  MemoryDetailSchema,
  MemoryEntitiesSchema,
  MemorySearchResponseSchema,
  MemoryTopicsSchema,
  SearchResponseSchema,
} from './memories.js';
import {
  ActivitiesSchema,
  ChannelStatsByIdSchema,
  ChannelStatsByPathSchema,
  MetricsSchema,
  ServiceHealthSchema,
  StatsHealthSchema,
  SystemStatsSchema,
  TopAuthorSchema,
  TopTopicSchema,
} from './stats.js';
import {
  WikiActivitiesSchema,
  WikiChannelSchema,
  WikiEntityPageSchema,
  WikiJobStartedSchema,
  WikiMetadataSchema,
  WikiPageDiffSchema,
  WikiPageResponseSchema,
  WikiRebuildStartedSchema,
  WikiStatusSchema,
  WikiStructureSchema,
  WikiSyncHistorySchema,
  WikiVersionSnapshotSchema,
  WikiVersionsSchema,
} from './wiki.js';

/**
 * What a route answers on success: a JSON body with a status, the ask event stream (spec "Events → Ask stream":
 * text/event-stream, 200), no body (204), or the stats export (JSON or CSV by `format`).
 */
export type ResponseContract =
  | { kind: 'json'; status: number; schema: z.ZodType }
  | { kind: 'sse' }
  | { kind: 'empty'; status: 204 }
  | { kind: 'export' };

const json = (schema: z.ZodType, status = 200): ResponseContract => ({ kind: 'json', status, schema });
const SSE: ResponseContract = { kind: 'sse' };
const EMPTY: ResponseContract = { kind: 'empty', status: 204 };

/**
 * The success response of each of the 77 routes of the spec's endpoints.txt, keyed `METHOD /path` as written there.
 * Statuses beyond 200 are the spec's (204 on a connection's deletion) or documented (README: 201 on create, 202 for
 * wiki jobs, 204 on a session's deletion).
 */
export const ROUTE_RESPONSES: Readonly<Record<string, ResponseContract>> = {
  'DELETE /api/ask/sessions/{session_id}': EMPTY,
  'DELETE /api/channels/{channel_id}/ask/sessions/{session_id}': EMPTY,
  'DELETE /api/channels/{channel_id}/data': json(ChannelDataDeletedSchema),
  'DELETE /api/connections/{connection_id}': EMPTY,
  'GET /api/ask/sessions': json(z.array(AskSessionSummarySchema)),
  'GET /api/ask/sessions/{session_id}': json(AskSessionDetailSchema),
  'GET /api/channels': json(z.array(ChannelSchema)),
  'GET /api/channels/{channel_id}': json(ChannelDetailSchema),
  'GET /api/channels/{channel_id}/ask/history': json(AskHistorySchema),
  'GET /api/channels/{channel_id}/ask/sessions': json(z.array(AskSessionSummarySchema)),
  'GET /api/channels/{channel_id}/ask/sessions/{session_id}': json(AskSessionDetailSchema),
  'GET /api/channels/{channel_id}/messages': json(ChannelMessagesSchema),
  'GET /api/channels/{channel_id}/settings': json(ChannelSettingsSchema),
  'GET /api/channels/{channel_id}/stats': json(ChannelStatsByPathSchema),
  'GET /api/channels/{channel_id}/sync/status': json(SyncJobSchema),
  'GET /api/connections': json(z.array(ConnectionSchema)),
  'GET /api/connections/{connection_id}': json(ConnectionDetailSchema),
  'GET /api/connections/{connection_id}/channels': json(z.array(ConnectionChannelSchema)),
  'GET /api/graph/common-neighbors': json(SubgraphSchema),
  'GET /api/graph/decisions': json(z.array(DecisionRecordSchema)),
  'GET /api/graph/entities': json(z.array(GraphEntitySchema)),
  'GET /api/graph/entities/cards': json(z.array(CardListEntrySchema)),
  'GET /api/graph/entities/{entity_id}': json(GraphEntityDetailSchema),
  'GET /api/graph/entities/{entity_id}/neighbors': json(NeighborsSchema),
  'GET /api/graph/entities/{entity_name}/card': json(EntityCardWithLifecycleSchema),
  'GET /api/graph/path': json(GraphPathSchema),
  'GET /api/graph/relationships': json(z.array(RelationshipSchema)),
  'GET /api/graph/subgraph': json(SubgraphSchema),
  'GET /api/health': json(ServiceHealthSchema),
  'GET /api/memories': json(MemoriesPageSchema),
  'GET /api/memories/entities': json(MemoryEntitiesSchema),
  'GET /api/memories/topics': json(MemoryTopicsSchema),
  'GET /api/memories/{memory_id}': json(MemoryDetailSchema),
  'GET /api/stats': json(SystemStatsSchema),
  'GET /api/stats/activity': json(ActivitiesSchema),
  'GET /api/stats/channel/{channel_id}': json(ChannelStatsByIdSchema),
  'GET /api/stats/export': { kind: 'export' },
  'GET /api/stats/health': json(StatsHealthSchema),
  'GET /api/stats/metrics': json(MetricsSchema),
  'GET /api/stats/top-authors': json(z.array(TopAuthorSchema)),
  'GET /api/stats/top-topics': json(z.array(TopTopicSchema)),
  'GET /api/sync/history': json(SyncHistorySchema),
  'GET /api/sync/schedules': json(SyncSchedulesSchema),
  'GET /api/sync/status': json(SyncJobSchema),
  'GET /api/wiki/activity': json(WikiActivitiesSchema),
  'GET /api/wiki/entities/{entity_type}/{entity_id}': json(WikiEntityPageSchema),
  'GET /api/wiki/metadata': json(WikiMetadataSchema),
  'GET /api/wiki/pages/{page_id}': json(WikiPageResponseSchema),
  'GET /api/wiki/status': json(WikiStatusSchema),
  'GET /api/wiki/structure': json(WikiStructureSchema),
  'GET /api/wiki/sync-history': json(WikiSyncHistorySchema),
  'GET /api/wiki/versions': json(WikiVersionsSchema),
  'GET /api/wiki/versions/{version_number}': json(WikiVersionSnapshotSchema),
  'GET /api/wiki/{channel_id}': json(WikiChannelSchema),
  'GET /api/wiki/{channel_id}/topics/{topic_id}': json(WikiPageResponseSchema),
  'POST /api/admin/acl/refresh': json(AclRefreshResultSchema),
  'POST /api/admin/backfill/{type}': json(BackfillResultSchema),
  'POST /api/admin/reconcile': json(ReconcileResultSchema),
  'POST /api/admin/wiki/rebuild': json(WikiRebuildStartedSchema, 202),
  'POST /api/ask': SSE,
  'POST /api/ask/feedback': json(AskFeedbackRecordedSchema),
  'POST /api/ask/upload': SSE,
  'POST /api/channels/{channel_id}/ask': SSE,
  'POST /api/channels/{channel_id}/ask/feedback': json(AskFeedbackRecordedSchema),
  'POST /api/channels/{channel_id}/ask/upload': SSE,
  'POST /api/channels/{channel_id}/sync': json(SyncStartedSchema),
  'POST /api/connections': json(ConnectionCreatedSchema, 201),
  'POST /api/connections/{connection_id}/validate': json(ConnectionValidationSchema),
  'POST /api/memories/search': json(MemorySearchResponseSchema),
  'POST /api/search': json(SearchResponseSchema),
  'POST /api/sync': json(SyncStartedSchema),
  'POST /api/sync/cancel': json(SyncCancelledSchema),
  'POST /api/wiki/refresh': json(WikiJobStartedSchema, 202),
  'PUT /api/channels/{channel_id}/settings': json(ChannelSettingsSchema),
  'PUT /api/connections/{connection_id}': json(ConnectionDetailSchema),
  'PUT /api/connections/{connection_id}/channels': json(ConnectionChannelsUpdatedSchema),
  'PUT /api/sync/schedules': json(SyncScheduleSchema),
};

/**
 * /api routes the service serves beyond endpoints.txt, each with where it is documented. A route served that is in
 * neither list fails the route-shape suite's coverage check, except what the interactive OpenAPI page loads (DOCS_ASSETS).
 */
export const DOCUMENTED_ROUTE_ADDITIONS: readonly { route: string; documented: string }[] = [
  { route: 'GET /api/admin/write-intents', documented: 'README "Write intents and the reconciler"' },
  { route: 'GET /api/admin/write-intents/{intent_id}', documented: 'README "Write intents and the reconciler"' },
  { route: 'GET /api/admin/dead-letters', documented: 'README "Dead letters"' },
  { route: 'GET /api/admin/dead-letters/{id}', documented: 'README "Dead letters"' },
  { route: 'POST /api/admin/dead-letters/{id}/redrive', documented: 'README "Dead letters"' },
  { route: 'POST /api/admin/dead-letters/redrive', documented: 'README "Dead letters"' },
  { route: 'GET /api/admin/keys', documented: 'docs/access.md "API keys"' },
  { route: 'POST /api/admin/keys', documented: 'docs/access.md "API keys"' },
  { route: 'GET /api/admin/keys/{key_id}', documented: 'docs/access.md "API keys"' },
  { route: 'DELETE /api/admin/keys/{key_id}', documented: 'docs/access.md "API keys"' },
  { route: 'GET /api/admin/audit', documented: 'docs/access.md "Audit trail"' },
  { route: 'GET /api/me', documented: 'docs/access.md "Who am I"' },
  { route: 'POST /api/imports', documented: 'docs/import.md "Importing from the browser"' },
  { route: 'GET /api/imports', documented: 'docs/import.md "Importing from the browser"' },
  { route: 'GET /api/imports/{import_id}', documented: 'docs/import.md "Importing from the browser"' },
  { route: 'GET /api/channels/{channel_id}/digest', documented: 'docs/digests.md' },
  { route: 'GET /api/digests', documented: 'docs/digests.md' },
  { route: 'GET /api/openapi.json', documented: 'docs/openapi.md' },
  { route: 'GET /api/docs', documented: 'docs/openapi.md' }, // the page (DOCS_ASSETS)
  { route: 'GET /api/wiki/pages/{page_id}/diff', documented: 'docs/wiki.md "History: as of a date, and page diffs"' },
  { route: 'GET /api/decisions', documented: 'docs/decisions.md "Routes"' },
  { route: 'GET /api/decisions/{item_id}', documented: 'docs/decisions.md "Routes"' },
  { route: 'GET /api/channels/{channel_id}/decisions', documented: 'docs/decisions.md "Routes"' },
  { route: 'GET /api/contradictions', documented: 'docs/contradictions.md' },
  { route: 'GET /api/channels/{channel_id}/contradictions', documented: 'docs/contradictions.md' },
  { route: 'POST /api/contradictions/{contradiction_id}/resolve', documented: 'docs/contradictions.md' },
];

/**
 * The success responses of the documented additions, keyed like ROUTE_RESPONSES (the OpenAPI document would declare
 * an addition missing here as any JSON value).
 */
export const ADDITION_RESPONSES: Readonly<Record<string, ResponseContract>> = {
  'GET /api/admin/keys': json(ApiKeyListSchema),
  'POST /api/admin/keys': json(ApiKeyCreatedSchema, 201),
  'GET /api/admin/keys/{key_id}': json(ApiKeySchema),
  'DELETE /api/admin/keys/{key_id}': json(ApiKeySchema),
  'GET /api/admin/audit': json(AuditPageSchema),
  'GET /api/me': json(MeSchema),
  'POST /api/imports': json(ImportJobSchema, 202),
  'GET /api/imports': json(ImportJobListSchema),
  'GET /api/imports/{import_id}': json(ImportJobSchema),
  'GET /api/channels/{channel_id}/digest': json(DigestSchema),
  'GET /api/digests': json(DigestListSchema),
  'GET /api/admin/write-intents': json(WriteIntentPageSchema),
  'GET /api/admin/write-intents/{intent_id}': json(WriteIntentSchema),
  'GET /api/admin/dead-letters': json(DeadLetterPageSchema),
  'GET /api/admin/dead-letters/{id}': json(DeadLetterDetailSchema),
  'POST /api/admin/dead-letters/{id}/redrive': json(DeadLetterRedriveSchema),
  'POST /api/admin/dead-letters/redrive': json(DeadLetterRedriveAllSchema),
  'GET /api/wiki/pages/{page_id}/diff': json(WikiPageDiffSchema),
  'GET /api/decisions': json(LifecyclePageSchema),
  'GET /api/decisions/{item_id}': json(LifecycleItemDetailSchema),
  'GET /api/channels/{channel_id}/decisions': json(LifecyclePageSchema),
  'GET /api/contradictions': json(ContradictionPageSchema),
  'GET /api/channels/{channel_id}/contradictions': json(ContradictionPageSchema),
  'POST /api/contradictions/{contradiction_id}/resolve': json(ContradictionSchema),
};

/**
 * The interactive OpenAPI page GET /api/docs and what it loads (Swagger UI: its script, styles and a copy of the
 * document), by prefix: served, documented (docs/openapi.md), and left out of the document they show.
 */
export const DOCS_ASSETS = 'GET /api/docs';

/**
 * Routes of endpoints.txt that are not built yet, each with the issue that builds it (docs/not-built-yet.md). The
 * route-shape suite excuses exactly these from its coverage check, and fails as soon as one of them is served (then
 * it leaves this list and is validated like every other route).
 */
export const ROUTES_NOT_BUILT_YET: readonly { route: string; issue: string }[] = [];

/**
 * Fields the service answers that neither the spec nor the docs name (found by the route-shape suite). The schemas
 * accept them so that one check, not every route, reports them; the suite fails while this list is not empty:
 * document each (and move it to a documented addition) or remove it.
 */
export const UNDOCUMENTED_FIELDS: readonly { object: string; field: string; seen: string }[] = [];

/** `METHOD /path/{param}` and `METHOD /path/:param` as one key, parameter names left out (they are not on the wire). */
export const routeShapeKey = (route: string): string => route.replace(/\{[^}]+\}|:[A-Za-z_][A-Za-z0-9_]*/g, '{}');

const BY_SHAPE = new Map(
  Object.entries(ROUTE_RESPONSES).map(([k, v]) => [routeShapeKey(k), { route: k, contract: v }]),
);
const ADDITIONS_BY_SHAPE = new Map(
  Object.entries(ADDITION_RESPONSES).map(([k, v]) => [routeShapeKey(k), { route: k, contract: v }]),
);

/** The documented addition and its response contract of a served route, if it has one (ADDITION_RESPONSES). */
export const additionContractOf = (route: string): { route: string; contract: ResponseContract } | undefined =>
  ADDITIONS_BY_SHAPE.get(routeShapeKey(route));

/** The endpoints.txt route and response contract of a served route (`GET /api/graph/entities/:ref`), if it is one. */
export const contractOf = (route: string): { route: string; contract: ResponseContract } | undefined =>
  BY_SHAPE.get(routeShapeKey(route));
