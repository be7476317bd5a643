import type { KeyObject } from 'node:crypto';
import { errorBody } from '@atlas/core';
import type { FastifyPluginAsync } from 'fastify';
import { HELP_TEXT, type InteractionOption, OFFLINE_TEXT, parseInteractionCommand } from '../commands.js';
import { type BotStore, intake } from '../intake.js';
import { renderPlatformB } from '../render.js';
import { ephemeral } from '../reply.js';
import { verifyPlatformB } from '../signatures.js';

/** Interaction types and response types of platform_b (Discord-like). */
const PING = 1;
const APPLICATION_COMMAND = 2;
const PONG = 1;
const CHANNEL_MESSAGE = 4;
const DEFERRED_CHANNEL_MESSAGE = 5;
const EPHEMERAL = 64;

interface Interaction {
  id?: string;
  type?: number;
  application_id?: string;
  token?: string;
  channel_id?: string;
  channel?: { id?: string; name?: string };
  member?: { user?: { id?: string } };
  user?: { id?: string };
  data?: { name?: string; options?: InteractionOption[] };
}

/**
 * platform_b (Discord-like) interactions: `POST /platform_b/interactions`, JSON, signed with Ed25519
 * (`x-signature-ed25519` over `x-signature-timestamp` + body; verifyPlatformB); a bad signature is 401
 * `{error: {code: UNAUTHORIZED}}`. PING answers PONG (`{type: 1}`); the application command `atlas` with the subcommand
 * ask (option `question`), sync or wiki is queued and answered with a deferred response (`{type: 5}`; ephemeral,
 * flags 64, for sync and wiki), and the worker sends the result as the interaction's follow-up. Another command or
 * subcommand: the help text (`{type: 4}`, ephemeral). Cache/queue store down: OFFLINE_TEXT (`{type: 4}`, ephemeral).
 */
export const platformBRoutes: FastifyPluginAsync<{ store: BotStore; publicKey: KeyObject }> = async (
  app,
  { store, publicKey },
) => {
  app.removeContentTypeParser('application/json'); // the signature is over the raw body
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.post('/platform_b/interactions', { bodyLimit: 64 * 1024 }, async (request, reply) => {
    const raw = typeof request.body === 'string' ? request.body : '';
    const ok = verifyPlatformB({
      publicKey,
      timestamp: header(request.headers['x-signature-timestamp']),
      signature: header(request.headers['x-signature-ed25519']),
      body: raw,
    });
    if (!ok) return reply.status(401).send(errorBody('UNAUTHORIZED', 'invalid request signature'));
    let i: Interaction;
    try {
      i = JSON.parse(raw) as Interaction;
    } catch {
      return reply.status(400).send(errorBody('INVALID_REQUEST', 'the body is not JSON'));
    }
    if (i.type === PING) return { type: PONG };
    if (i.type !== APPLICATION_COMMAND)
      return reply.status(400).send(errorBody('INVALID_REQUEST', `interaction type ${String(i.type)} is not handled`));
    const message = (text: string) => ({ type: CHANNEL_MESSAGE, data: renderPlatformB(ephemeral(text)) });
    const command = parseInteractionCommand(i.data ?? {});
    if (command.kind === 'help') return message(HELP_TEXT);
    const channelId = i.channel_id ?? i.channel?.id;
    if (!i.id || !i.application_id || !i.token || !channelId)
      return reply
        .status(400)
        .send(errorBody('INVALID_REQUEST', 'an interaction needs id, application_id, token and channel_id'));
    const result = await intake(store.port, `platform_b:${i.id}`, {
      platform: 'platform_b',
      command,
      channelId,
      channelName: i.channel?.name ?? null,
      userId: i.member?.user?.id ?? i.user?.id ?? '',
      replyTo: { kind: 'interaction', applicationId: i.application_id, token: i.token },
      receivedAt: new Date().toISOString(),
    });
    if (result === 'offline') return message(OFFLINE_TEXT);
    const shared = command.kind === 'ask' || command.kind === 'digest'; // answers the channel sees
    return { type: DEFERRED_CHANNEL_MESSAGE, ...(shared ? {} : { data: { flags: EPHEMERAL } }) };
  });
};

const header = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
