import { createHash } from 'node:crypto';
import { errorBody } from '@atlas/core';
import type { FastifyPluginAsync } from 'fastify';
import { HELP_TEXT, OFFLINE_TEXT, parseCommandText } from '../commands.js';
import { type BotStore, intake } from '../intake.js';
import { renderPlatformA } from '../render.js';
import { ephemeral } from '../reply.js';
import { verifyPlatformA } from '../signatures.js';

const ACK: Record<'ask' | 'sync' | 'wiki' | 'digest', string> = {
  ask: 'Looking into it: the answer follows here in a moment.',
  sync: 'Starting a sync of this channel…',
  wiki: 'Fetching the wiki of this channel…',
  digest: 'Making the digest of this channel…',
};

/**
 * platform_a (Slack-like) slash commands: `POST /platform_a/commands`, form-encoded as the platform sends it
 * (`command`, `text`, `channel_id`, `channel_name`, `user_id`, `team_id`, `response_url`, `trigger_id`), signed with
 * the signing secret (verifyPlatformA: v0 HMAC-SHA256, 5-minute replay window); a missing or wrong signature is 401
 * `{error: {code: UNAUTHORIZED}}`, a body without channel_id or response_url 400. Answers within the platform's 3 s,
 * always 200 with an ephemeral message: the help text (unknown or empty subcommand), an acknowledgement after the
 * command was queued (the result is POSTed to response_url by the worker), the same acknowledgement for a repeated
 * delivery of a command already taken (same trigger_id; not queued twice), or OFFLINE_TEXT when the cache/queue store
 * is down.
 */
export const platformARoutes: FastifyPluginAsync<{
  store: BotStore;
  signingSecret: string;
  now?: () => number;
}> = async (app, { store, signingSecret, now }) => {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
    done(null, body),
  );
  app.post('/platform_a/commands', { bodyLimit: 64 * 1024 }, async (request, reply) => {
    const raw = typeof request.body === 'string' ? request.body : '';
    const ok = verifyPlatformA({
      secret: signingSecret,
      timestamp: header(request.headers['x-slack-request-timestamp']),
      signature: header(request.headers['x-slack-signature']),
      body: raw,
      ...(now ? { nowMs: now() } : {}),
    });
    if (!ok) return reply.status(401).send(errorBody('UNAUTHORIZED', 'invalid or expired request signature'));
    const form = new URLSearchParams(raw);
    const channelId = form.get('channel_id');
    const responseUrl = form.get('response_url');
    if (!channelId || !responseUrl || !URL.canParse(responseUrl))
      return reply.status(400).send(errorBody('INVALID_REQUEST', 'a slash command needs channel_id and response_url'));
    const command = parseCommandText(form.get('text') ?? '');
    if (command.kind === 'help') return renderPlatformA(ephemeral(HELP_TEXT));
    const deliveryId = `platform_a:${form.get('team_id') ?? ''}:${form.get('trigger_id') || createHash('sha256').update(raw).digest('hex')}`;
    const result = await intake(store.port, deliveryId, {
      platform: 'platform_a',
      command,
      channelId,
      channelName: form.get('channel_name'),
      userId: form.get('user_id') ?? '',
      replyTo: { kind: 'response_url', url: responseUrl },
      receivedAt: new Date().toISOString(),
    });
    return renderPlatformA(ephemeral(result === 'offline' ? OFFLINE_TEXT : ACK[command.kind]));
  });
};

const header = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
