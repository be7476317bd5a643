import { AtlasError } from '@atlas/core';
import type { DeadLetterStore, IntentStore } from '@atlas/stores';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyPluginAsync,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

/**
 * The write-intent reconciler and the dead-letter queue, as the admin routes use them (ports wired by the CLI runtime;
 * absent: those routes are not registered).
 */
export interface AdminPorts {
  reconcile?: {
    /** One reconcile pass now (runReconcilePass): what it did, see docs/write-intents.md. */
    run(): Promise<object>;
    intents: Pick<IntentStore, 'list' | 'get' | 'countByState'>;
  };
  deadLetters?: {
    store: Pick<DeadLetterStore, 'list' | 'get' | 'counts'>;
    /** Re-drives one item (redriveDeadLetter); AtlasError NOT_FOUND / CONFLICT. */
    redrive(id: string): Promise<object>;
    /** Re-drives every pending item matching the filter (redriveAllDeadLetters). */
    redriveAll(filter: {
      group?: string;
      topic?: string;
      eventType?: string;
      errorCode?: string;
      limit?: number;
    }): Promise<object>;
  };
}

/** What the admin routes read: the two backfills and, when registered, the reconciler and the dead letters. */
export interface AdminRoutesOptions {
  /** Drains the entity backlog (POST /api/admin/backfill/entities). */
  backfillEntities: () => Promise<{ processed: number; remaining: number }>;
  /** Drains the embedding backlog (POST /api/admin/backfill/embeddings); null without embeddings. */
  backfillEmbeddings: (() => Promise<{ processed: number; remaining: number }>) | null;
  /** Write intents (POST /api/admin/reconcile, write-intents) and dead letters. Absent: those routes are not registered. */
  admin?: AdminPorts;
}

const Page = (def: number, max: number) => ({
  limit: z.coerce.number().int().min(1).max(max).default(def),
  offset: z.coerce.number().int().min(0).default(0),
});
const Bool = z.enum(['true', 'false']).transform((v) => v === 'true');

/**
 * POST /api/admin/backfill/{type} (spec "Admin"): `embeddings` drains the embedding backlog in batches of
 * 100 and answers `{type, processed, remaining}` (the spec does not show the body); `entities` drains the
 * entity backlog the same way: fact sets whose extraction was skipped (LLM down) are extracted, graph writes
 * that failed (graph store down) are applied. A dependency still down answers 503 with what is left queued.
 */
export const adminRoutes: FastifyPluginAsync<AdminRoutesOptions> = async (root, ports) => {
  const app = root.withTypeProvider<ZodTypeProvider>();
  app.post(
    '/api/admin/backfill/:type',
    { schema: { params: z.object({ type: z.enum(['entities', 'embeddings']) }) } },
    async ({ params }) => {
      if (params.type === 'entities') return { type: params.type, ...(await ports.backfillEntities()) };
      if (!ports.backfillEmbeddings) {
        throw new AtlasError('PROVIDER_UNAVAILABLE', 'no embedding provider or vector store is configured', {
          retriable: false,
          expose: true, // a configuration fact for the caller, no internals (errors.ts: 5xx bodies)
        });
      }
      return { type: params.type, ...(await ports.backfillEmbeddings()) };
    },
  );
  registerReconcileRoutes(app, ports.admin?.reconcile);
  registerDeadLetterRoutes(app, ports.admin?.deadLetters);
};

type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

/**
 * Write intents (spec "Write intent (two-phase persist)", "POST /api/admin/reconcile: retry failed writes"):
 * - POST /api/admin/reconcile (no body) runs one reconcile pass now and answers what it did: `{started_at,
 *   finished_at, duration_ms, candidates, retried, deferred, writes: {written, skipped, superseded, failed, permanent},
 *   abandoned, intents: [{intent_id, message_id, channel_id, attempt, stores, errors}], states}` where `states` is
 *   `{pending, done, failed, abandoned}` as read when the pass ended.
 * - GET /api/admin/write-intents (state, channel_id, message_id; limit default 50, max 500; offset) answers
 *   `{intents, total, limit, offset, states}`; GET /api/admin/write-intents/{intent_id} one intent (404 unknown).
 */
const registerReconcileRoutes = (app: App, reconcile: AdminPorts['reconcile']) => {
  if (!reconcile) return;
  app.post('/api/admin/reconcile', async () => {
    const result = await reconcile.run();
    return { ...result, states: await reconcile.intents.countByState() };
  });
  app.get(
    '/api/admin/write-intents',
    {
      schema: {
        querystring: z.object({
          state: z.enum(['pending', 'done', 'failed', 'abandoned']).optional(),
          channel_id: z.string().min(1).optional(),
          message_id: z.string().uuid().optional(),
          ...Page(50, 500),
        }),
      },
    },
    async ({ query }) => {
      const { intents, total } = await reconcile.intents.list({
        state: query.state,
        channelId: query.channel_id,
        messageId: query.message_id,
        limit: query.limit,
        offset: query.offset,
      });
      return {
        intents,
        total,
        limit: query.limit,
        offset: query.offset,
        states: await reconcile.intents.countByState(),
      };
    },
  );
  app.get(
    '/api/admin/write-intents/:intent_id',
    { schema: { params: z.object({ intent_id: z.string().min(1) }) } },
    async ({ params }) => {
      const intent = await reconcile.intents.get(params.intent_id);
      if (!intent) throw new AtlasError('NOT_FOUND', `no write intent ${params.intent_id}`);
      return intent;
    },
  );
};

/**
 * Dead letters (spec "Degraded behaviour": fact extraction failures go to the dead-letter queue; manual inspection after
 * 5 failures):
 * - GET /api/admin/dead-letters (status `pending` | `redriven`, group (consumer group or projector name), topic,
 *   event_type, channel_id (the event's key), error_code, needs_inspection `true` | `false`; limit default 50, max 200;
 *   offset)
 *   answers `{dead_letters, total, limit, offset, counts: {pending, redriven, needs_inspection}}`, newest first;
 * - GET /api/admin/dead-letters/{id}: the item with `event_data` (the original event's data; 404 unknown);
 * - POST /api/admin/dead-letters/{id}/redrive: re-appends the original event to its topic and marks the item re-driven:
 *   `{id, status: "redriven", event_type, redriven_at, redriven_to: {topic, partition, offset}}`; 404 unknown, 409
 *   already re-driven or kept no event;
 * - POST /api/admin/dead-letters/redrive (body optional: group, topic, event_type, error_code, limit 1-1000) re-drives every pending
 *   item that kept its event: `{redriven, results, failed: [{id, error}], remaining}`.
 */
const registerDeadLetterRoutes = (app: App, deadLetters: AdminPorts['deadLetters']) => {
  if (!deadLetters) return;
  app.get(
    '/api/admin/dead-letters',
    {
      schema: {
        querystring: z.object({
          status: z.enum(['pending', 'redriven']).optional(),
          group: z.string().min(1).optional(),
          topic: z.string().min(1).optional(),
          event_type: z.string().min(1).optional(),
          channel_id: z.string().min(1).optional(),
          error_code: z.string().min(1).optional(),
          needs_inspection: Bool.optional(),
          ...Page(50, 200),
        }),
      },
    },
    async ({ query }) => {
      const { items, total } = await deadLetters.store.list({
        status: query.status,
        group: query.group,
        topic: query.topic,
        eventType: query.event_type,
        key: query.channel_id,
        errorCode: query.error_code,
        needsInspection: query.needs_inspection,
        limit: query.limit,
        offset: query.offset,
      });
      return {
        dead_letters: items,
        total,
        limit: query.limit,
        offset: query.offset,
        counts: await deadLetters.store.counts(),
      };
    },
  );
  app.post(
    '/api/admin/dead-letters/redrive',
    {
      schema: {
        // No body at all arrives as null.
        body: z
          .object({
            group: z.string().min(1).optional(),
            topic: z.string().min(1).optional(),
            event_type: z.string().min(1).optional(),
            error_code: z.string().min(1).optional(),
            limit: z.number().int().min(1).max(1000).optional(),
          })
          .strict()
          .nullish(),
      },
    },
    async ({ body }) =>
      deadLetters.redriveAll({
        group: body?.group,
        topic: body?.topic,
        eventType: body?.event_type,
        errorCode: body?.error_code,
        limit: body?.limit,
      }),
  );
  app.get(
    '/api/admin/dead-letters/:id',
    { schema: { params: z.object({ id: z.string().min(1) }) } },
    async ({ params }) => {
      const item = await deadLetters.store.get(params.id);
      if (!item) throw new AtlasError('NOT_FOUND', `no dead letter ${params.id}`);
      return item;
    },
  );
  app.post(
    '/api/admin/dead-letters/:id/redrive',
    { schema: { params: z.object({ id: z.string().min(1) }) } },
    async ({ params }) => deadLetters.redrive(params.id),
  );
};
