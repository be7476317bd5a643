import { createHash } from 'node:crypto';
import type { CacheQueueStore } from '@atlas/stores';
import { z } from 'zod';
import type { Asker, BackendClient } from './backend.js';
import { renderPlatformA, renderPlatformB } from './render.js';
import type { BotReply } from './reply.js';

/** The queue the bot's commands wait in (cache/queue store). */
export const COMMAND_QUEUE = 'bot:commands';
/** How long an ask's answer is served from the cache/queue store before the backend is asked again, ms. */
export const ANSWER_CACHE_TTL_MS = 5 * 60_000;
/** How long a command delivery stays claimed (a platform's retry of it inside this window is not worked off again), ms. */
export const CLAIM_TTL_MS = 10 * 60_000;

/** A queued command: what to run, where it came from, and where its result goes (response_url or an interaction). */
export const BotJob = z.object({
  platform: z.enum(['platform_a', 'platform_b']),
  command: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('ask'), question: z.string().min(1) }),
    z.object({ kind: z.literal('sync') }),
    z.object({ kind: z.literal('wiki') }),
    z.object({ kind: z.literal('digest') }),
  ]),
  channelId: z.string().min(1),
  channelName: z.string().nullable(),
  userId: z.string(),
  replyTo: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('response_url'), url: z.string().url() }),
    z.object({ kind: z.literal('interaction'), applicationId: z.string().min(1), token: z.string().min(1) }),
  ]),
  receivedAt: z.string(),
});
export type BotJob = z.infer<typeof BotJob>;

/**
 * The answer cache key of a question asked by a user: sha256 of the platform user and the question's lower-cased,
 * whitespace-collapsed text. Per user, because what an answer may cite follows the asker's channel membership
 * (docs/access.md "The bridge"): one user's cached answer is never served to another.
 */
export const answerKey = (question: string, asker = ''): string =>
  `bot:answer:${createHash('sha256')
    .update(`${asker}\n${question.toLowerCase().replace(/\s+/g, ' ').trim()}`)
    .digest('hex')}`;

export interface JobDeps {
  backend: BackendClient;
  /** The guarded cache/queue store (answer cache). A failing cache is skipped: the backend answers. */
  store: CacheQueueStore;
  /** platform_b's REST API base (PLATFORM_B_API_URL, without the version) for interaction follow-ups. */
  platformBApiUrl: string;
  log?: { warn(obj: object, msg: string): void };
}

/**
 * Works off one command: runs it against the backend (an ask first looks in the answer cache, and a complete answer
 * is cached for ANSWER_CACHE_TTL_MS), then delivers the reply: platform_a, a JSON POST to the command's response_url
 * (renderPlatformA); platform_b, a follow-up `POST {PLATFORM_B_API_URL}/v10/webhooks/{application_id}/{token}` (the
 * first follow-up of a deferred interaction replaces its "thinking" state; renderPlatformB). Deliveries are tried 3
 * times (0.5 s, 1 s apart) on network errors, 429 and 5xx; then the failure is logged. Never throws for the backend or
 * the platform.
 */
export const runJob = async (job: BotJob, deps: JobDeps): Promise<BotReply> => {
  const reply = await replyOf(job, deps);
  await deliver(job, reply, deps);
  return reply;
};

const replyOf = async (job: BotJob, deps: JobDeps): Promise<BotReply> => {
  const asker: Asker = { platform: job.platform, user_id: job.userId }; // the backend answers as this user may see
  switch (job.command.kind) {
    case 'sync':
      return deps.backend.sync(job.channelId, job.channelName, asker);
    case 'wiki':
      return deps.backend.wiki(job.channelId, asker);
    case 'digest':
      return deps.backend.digest(job.channelId, asker);
    case 'ask': {
      const key = answerKey(job.command.question, `${asker.platform}:${asker.user_id}`);
      const cached = await deps.store.get(key).catch(() => null);
      const hit = cached ? parseReply(cached) : null;
      if (hit) return hit;
      const reply = await deps.backend.ask(job.command.question, asker);
      if (reply.visibility === 'in_channel')
        await deps.store.set(key, JSON.stringify(reply), ANSWER_CACHE_TTL_MS).catch(() => undefined);
      return reply;
    }
  }
};

/** A cached reply, or null when the value is not one (written by another version): the backend answers instead. */
const parseReply = (raw: string): BotReply | null => {
  try {
    const v = JSON.parse(raw) as BotReply;
    return typeof v.text === 'string' && Array.isArray(v.sources) ? v : null;
  } catch {
    return null;
  }
};

const deliver = async (job: BotJob, reply: BotReply, deps: JobDeps): Promise<void> => {
  const { url, body } =
    job.replyTo.kind === 'response_url'
      ? { url: job.replyTo.url, body: renderPlatformA(reply) }
      : {
          url: `${deps.platformBApiUrl.replace(/\/+$/, '')}/v10/webhooks/${job.replyTo.applicationId}/${job.replyTo.token}`,
          body: renderPlatformB(reply),
        };
  await postJson(url, body, deps.log);
};

/** POSTs JSON with 3 tries (network error, 429, 5xx retried after 0.5 s, then 1 s); logs the final failure. */
export const postJson = async (url: string, body: object, log?: JobDeps['log']): Promise<boolean> => {
  let last = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 500 * attempt));
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      await res.body?.cancel();
      if (res.ok) return true;
      last = `HTTP ${res.status}`;
      if (res.status !== 429 && res.status < 500) break;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
  }
  log?.warn({ component: 'bot', error: last }, 'bot reply could not be delivered');
  return false;
};
