import { AtlasError, notFound } from '@atlas/core';
import type { PlatformClient, PlatformCredentials, ValidationResult } from '@atlas/platforms';
import type {
  Connection,
  ConnectionChannel,
  ConnectionPlatform,
  ConnectionStore,
  StoredCredentials,
} from '@atlas/stores';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

type ValidationFailure = Extract<ValidationResult, { valid: false }>['error'];
/** The part of the platform client (packages/platforms/src/live) the connection routes use. */
export type ConnectionPlatformClient = Pick<PlatformClient, 'validate' | 'listChannels'>;

/** The connections routes' ports: the store and a platform client factory (the runtime's is platformClient). */
export interface ConnectionPorts {
  store: ConnectionStore;
  platformClient: (credentials: PlatformCredentials) => ConnectionPlatformClient;
  /** The clock (tests); default `new Date()`. */
  now?: () => Date;
}

const Params = z.object({ connection_id: z.string().min(1).max(200) });
const Name = z.string().trim().min(1).max(200);
const Secret = z.string().trim().min(1).max(1000);
/** Spec "Connection" settings; sync_interval_minutes from 1 minute to 1 week. */
const Settings = z
  .object({
    sync_interval_minutes: z.number().int().min(1).max(10_080),
    wiki_enabled: z.boolean(),
    graph_enabled: z.boolean(),
  })
  .partial()
  .strict();
const Platform = z.enum(['platform_a', 'platform_b']);
/** Per platform (spec "Connection" credentials); `platform` may repeat the connection's. */
const CREDENTIALS = {
  platform_a: z.object({ platform: z.literal('platform_a').optional(), bot_token: Secret, signing_secret: Secret }),
  platform_b: z.object({ platform: z.literal('platform_b').optional(), bot_token: Secret, guild_id: Secret }),
} as const;
const RawCredentials = z.record(z.string(), z.unknown());

/** Body of POST /api/connections (spec "Connections"), plus optional settings. */
export const CreateConnectionBody = z.object({
  platform: Platform,
  name: Name,
  credentials: RawCredentials,
  settings: Settings.optional(),
});
/** Body of PUT /api/connections/{connection_id}: at least one of name, credentials, settings. */
export const UpdateConnectionBody = z
  .object({ name: Name.optional(), credentials: RawCredentials.optional(), settings: Settings.optional() })
  .strict()
  .refine((b) => b.name !== undefined || b.credentials !== undefined || b.settings !== undefined, {
    message: 'give at least one of name, credentials, settings',
  });
/** Body of PUT /api/connections/{connection_id}/channels: channel_ids, sync_all, or both (the union is enabled). */
export const SelectChannelsBody = z
  .object({ channel_ids: z.array(z.string().min(1).max(200)).max(5000).optional(), sync_all: z.boolean().optional() })
  .strict()
  .refine((b) => b.channel_ids !== undefined || b.sync_all !== undefined, {
    message: 'give channel_ids, sync_all or both',
  });

const invalid = (message: string, issues: { path: string; message: string }[] = []) =>
  new AtlasError('INVALID_REQUEST', message, issues.length ? { details: { issues } } : {});

/**
 * The platform's credentials from a request body's `credentials` for `platform`: 400 INVALID_REQUEST when a field is
 * missing or empty, when the credentials name another platform or carry the other platform's fields (platform
 * mismatch), or carry unknown fields. Values are trimmed (spec "Platform setup errors": no extra spaces).
 */
const parseCredentials = (platform: ConnectionPlatform, raw: Record<string, unknown>): PlatformCredentials => {
  if (raw.platform !== undefined && raw.platform !== platform)
    throw invalid(
      `platform mismatch: the credentials are for ${raw.platform === 'platform_a' || raw.platform === 'platform_b' ? raw.platform : 'another platform'}, the connection is ${platform}`,
      [{ path: 'body.credentials.platform', message: `must be ${platform}` }],
    );
  const other = platform === 'platform_a' ? 'guild_id' : 'signing_secret';
  if (other in raw)
    throw invalid(`platform mismatch: ${other} is a credential of the other platform, the connection is ${platform}`, [
      { path: `body.credentials.${other}`, message: `not a ${platform} credential` },
    ]);
  const schema = CREDENTIALS[platform].strict();
  const r = schema.safeParse(raw);
  if (!r.success) {
    const issues = r.error.issues.map((i) => ({
      path: ['body', 'credentials', ...i.path.map(String)].join('.'),
      message: i.message,
    }));
    throw invalid(`invalid ${platform} credentials: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`, issues);
  }
  const { platform: _, ...fields } = r.data;
  return { platform, ...fields } as PlatformCredentials;
};

/** The credential fields without the platform discriminator (what the store encrypts). */
const storedOf = (c: PlatformCredentials): StoredCredentials => {
  const { platform: _, ...fields } = c;
  return fields;
};

/** Replaces the secrets (bot_token, signing_secret) in `text`, a platform's message, so none reaches a response or log. */
const scrub = (text: string, c: PlatformCredentials): string =>
  [c.bot_token, c.platform === 'platform_a' ? c.signing_secret : '']
    .filter((v) => v.length > 0)
    .reduce((t, v) => t.split(v).join('[redacted]'), text);

/** The client's answer, or a NETWORK_ERROR result when it throws; messages scrubbed of credentials. */
const validateWith = async (ports: ConnectionPorts, c: PlatformCredentials): Promise<ValidationResult> => {
  let r: ValidationResult;
  try {
    r = await ports.platformClient(c).validate();
  } catch (err) {
    r = { valid: false, error: { code: 'NETWORK_ERROR', message: `platform request failed: ${errorText(err)}` } };
  }
  return r.valid ? r : { valid: false, error: { ...r.error, message: scrub(r.error.message, c) } };
};

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * The HTTP error for credentials a platform refused on create or update (nothing is saved): INVALID_CREDENTIALS,
 * AUTH_EXPIRED, INSUFFICIENT_PERMISSIONS → 400 INVALID_REQUEST; RATE_LIMITED → 429 RATE_LIMIT_EXCEEDED; NETWORK_ERROR,
 * PLATFORM_ERROR → 503 PROVIDER_UNAVAILABLE (retriable). details.validation_error is the validation error
 * (code, message, required_scopes?, retry_after?). No cause is attached (nothing of the request reaches a log).
 */
const refused = (platform: ConnectionPlatform, e: ValidationFailure): AtlasError => {
  const details = { validation_error: e, ...(e.retry_after === undefined ? {} : { retry_after: e.retry_after }) };
  const message = `${platform} refused the credentials: ${e.code}: ${e.message}`;
  if (e.code === 'RATE_LIMITED') return new AtlasError('RATE_LIMIT_EXCEEDED', message, { retriable: true, details });
  if (e.code === 'NETWORK_ERROR' || e.code === 'PLATFORM_ERROR')
    return new AtlasError('PROVIDER_UNAVAILABLE', `${platform} could not check the credentials: ${e.message}`, {
      retriable: true,
      details,
      expose: true, // the platform's validation error (spec "Connection validation errors"), no Atlas internals
    });
  return new AtlasError('INVALID_REQUEST', message, { details });
};

/** Spec "Connection" list form (GET /api/connections). */
const listForm = (c: Connection) => ({
  id: c.id,
  name: c.name,
  platform: c.platform,
  status: c.status,
  created_at: c.created_at,
  last_sync: c.last_sync,
  channel_count: c.channel_count,
});
/** Spec "Connection" detail form (GET /api/connections/{id}): the list form plus settings, updated_at, validated_at. */
const detailForm = (c: Connection) => ({
  ...listForm(c),
  updated_at: c.updated_at,
  validated_at: c.validated_at,
  settings: c.settings,
});

/**
 * The connections routes (spec "Endpoints → Connections", "Connection status", "Authentication" 1-2, "Errors →
 * Connection validation errors"); shapes in docs/connections.md. Credentials are validated with the platform before
 * they are saved, stored encrypted, and never returned nor logged (platform messages are scrubbed of them).
 * Unknown connection: 404 NOT_FOUND; bad body: 400 INVALID_REQUEST. Not registered without `ports.connections`.
 */
export const connectionRoutes: FastifyPluginAsync<{ connections?: ConnectionPorts }> = async (root, ports) => {
  const cp = ports.connections;
  if (!cp) return;
  const app = root.withTypeProvider<ZodTypeProvider>();
  const now = cp.now ?? (() => new Date());
  const { store } = cp;
  const found = async (id: string): Promise<Connection> => {
    const c = await store.get(id);
    if (!c) throw notFound('connection', id);
    return c;
  };
  const credentialsOf = async (id: string): Promise<PlatformCredentials> => {
    const c = await store.credentials(id);
    if (!c) throw notFound('connection', id);
    return { platform: c.platform, ...c.credentials } as PlatformCredentials;
  };
  /**
   * The platform's channels. The client throws PlatformError (spec "Sync errors" codes): AUTH_ERROR → 400
   * INVALID_REQUEST (the stored credentials need attention: the connection's status becomes `error`), RATE_LIMIT →
   * 429 RATE_LIMIT_EXCEEDED with details.retry_after, anything else → 503 PROVIDER_UNAVAILABLE (retriable).
   */
  const platformChannels = async (id: string, c: PlatformCredentials) => {
    try {
      return await cp.platformClient(c).listChannels();
    } catch (err) {
      const e = err as { code?: unknown; retryAfter?: unknown };
      const code = typeof e.code === 'string' ? e.code : 'PLATFORM_ERROR';
      const platform_error = { code, message: scrub(errorText(err), c) };
      if (code === 'AUTH_ERROR') {
        await store.update(id, { status: 'error' });
        throw new AtlasError(
          'INVALID_REQUEST',
          `${c.platform} refused the stored credentials (${platform_error.message}): update or validate the connection`,
          { details: { platform_error } },
        );
      }
      if (code === 'RATE_LIMIT')
        throw new AtlasError('RATE_LIMIT_EXCEEDED', `${c.platform} rate limit: ${platform_error.message}`, {
          retriable: true,
          details: { platform_error, ...(typeof e.retryAfter === 'number' ? { retry_after: e.retryAfter } : {}) },
        });
      throw new AtlasError(
        'PROVIDER_UNAVAILABLE',
        `${c.platform} could not list the channels: ${platform_error.message}`,
        {
          retriable: true,
          details: { platform_error },
        },
      );
    }
  };

  app.get('/api/connections', async () => (await store.list()).map(listForm));

  app.get('/api/connections/:connection_id', { schema: { params: Params } }, async ({ params }) =>
    detailForm(await found(params.connection_id)),
  );

  app.post('/api/connections', { schema: { body: CreateConnectionBody } }, async ({ body }, reply) => {
    const credentials = parseCredentials(body.platform, body.credentials);
    const v = await validateWith(cp, credentials);
    if (!v.valid) throw refused(body.platform, v.error);
    const at = now();
    const c = await store.create(
      {
        name: body.name,
        platform: body.platform,
        credentials: storedOf(credentials),
        ...(body.settings ? { settings: body.settings } : {}),
        status: 'connected',
        validated_at: at.toISOString(),
      },
      at,
    );
    const { last_sync: _, ...created } = listForm(c); // spec: last_sync is absent from the create response
    return reply.status(201).send(created);
  });

  app.put(
    '/api/connections/:connection_id',
    { schema: { params: Params, body: UpdateConnectionBody } },
    async ({ params, body }) => {
      const cur = await found(params.connection_id);
      const at = now();
      let validated: { credentials: StoredCredentials; status: 'connected'; validated_at: string } | null = null;
      if (body.credentials) {
        const credentials = parseCredentials(cur.platform, body.credentials);
        const v = await validateWith(cp, credentials);
        if (!v.valid) throw refused(cur.platform, v.error);
        validated = { credentials: storedOf(credentials), status: 'connected', validated_at: at.toISOString() };
      }
      const c = await store.update(
        cur.id,
        {
          ...(body.name === undefined ? {} : { name: body.name }),
          ...(body.settings ? { settings: body.settings } : {}),
          ...validated,
        },
        at,
      );
      if (!c) throw notFound('connection', cur.id);
      return detailForm(c);
    },
  );

  app.delete('/api/connections/:connection_id', { schema: { params: Params } }, async ({ params }, reply) => {
    if (!(await store.delete(params.connection_id))) throw notFound('connection', params.connection_id);
    return reply.status(204).send();
  });

  app.post('/api/connections/:connection_id/validate', { schema: { params: Params } }, async ({ params }) => {
    const credentials = await credentialsOf(params.connection_id);
    const v = await validateWith(cp, credentials);
    const at = now().toISOString();
    if (v.valid) {
      const c = await store.update(params.connection_id, { status: 'connected', validated_at: at });
      if (!c) throw notFound('connection', params.connection_id);
      return {
        valid: true,
        connection: { id: c.id, status: c.status, validated_at: at },
        workspace: v.workspace,
        bot: v.bot,
        scopes: v.scopes,
      };
    }
    // Credentials the platform refuses need attention; a network, platform or rate-limit failure says nothing of them.
    if (['INVALID_CREDENTIALS', 'AUTH_EXPIRED', 'INSUFFICIENT_PERMISSIONS'].includes(v.error.code))
      await store.update(params.connection_id, { status: 'error' });
    const { code, message, required_scopes, retry_after } = v.error;
    return {
      valid: false,
      error: {
        code,
        message,
        ...(code === 'INSUFFICIENT_PERMISSIONS' ? { required_scopes: required_scopes ?? [] } : {}),
        ...(retry_after === undefined ? {} : { retry_after }),
      },
    };
  });

  app.get('/api/connections/:connection_id/channels', { schema: { params: Params } }, async ({ params }) => {
    const credentials = await credentialsOf(params.connection_id);
    const listed = await platformChannels(params.connection_id, credentials);
    const saved = new Map((await store.channels(params.connection_id)).map((c) => [c.id, c.sync_enabled]));
    return listed.map((c): ConnectionChannel => ({ ...channelOf(c), sync_enabled: saved.get(c.id) ?? false }));
  });

  app.put(
    '/api/connections/:connection_id/channels',
    { schema: { params: Params, body: SelectChannelsBody } },
    async ({ params, body }) => {
      const credentials = await credentialsOf(params.connection_id);
      const listed = await platformChannels(params.connection_id, credentials);
      const known = new Set(listed.map((c) => c.id));
      const unknown = (body.channel_ids ?? []).filter((id) => !known.has(id));
      if (unknown.length > 0)
        throw new AtlasError('INVALID_REQUEST', `channels not on the platform: ${unknown.slice(0, 20).join(', ')}`, {
          details: { unknown_channel_ids: unknown },
        });
      const chosen = new Set(body.channel_ids ?? []);
      const channels = listed.map(
        (c): ConnectionChannel => ({
          ...channelOf(c),
          sync_enabled: chosen.has(c.id) || (body.sync_all === true && !c.is_private),
        }),
      );
      const count = await store.saveChannels(params.connection_id, channels, now());
      if (count === null) throw notFound('connection', params.connection_id);
      return { connection_id: params.connection_id, channel_count: count, channels };
    },
  );
};

/** A platform channel in the spec's form: the name prefixed with `#` (spec "Connection channel"). */
const channelOf = (c: { id: string; name: string; is_private: boolean; member_count: number }) => ({
  id: c.id,
  name: c.name.startsWith('#') ? c.name : `#${c.name}`,
  is_private: c.is_private,
  member_count: c.member_count,
});
