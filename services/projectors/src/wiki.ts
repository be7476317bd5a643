import { type AnyStoredEvent, cronJob, runsOfType, type StoredEvent, TOPICS } from '@atlas/core';
import type { Projector } from '@atlas/eventlog';
import { signalOf } from '@atlas/pipeline';
import {
  batchedDeps,
  cachedWikiSink,
  generateChannelWiki,
  RenderMemo,
  type WikiGenerateDeps,
  type WikiGenerateResult,
} from '@atlas/wiki';

/** What the wiki projector reads and writes: the wiki store's stale flags and its sources (WikiStore). */
export interface WikiProjectorDeps {
  wiki: {
    markStale(...channelIds: string[]): Promise<void>;
    channelsCiting(messages: readonly { channelId: string; messageId: string }[]): Promise<Set<string>>;
    /** Deletes the channel's whole wiki (ChannelDataDeleted at `requestedAt`); resolves to the pages it had. */
    deleteChannel(channelId: string, requestedAt?: string): Promise<number>;
    /** The channel's current version (its generated_at), or null. */
    currentVersion(channelId: string): Promise<{ generated_at: string } | null>;
  };
}

/**
 * The wiki projector (consumer group `atlas.projector.wiki`): marks a channel's wiki stale (spec "Wiki generation":
 * is_stale) when something it shows changed: a message got facts (FactsExtracted with facts) or graph entities,
 * relationships or supersessions (EntitiesExtracted), an admin resolved a potential contradiction
 * (ContradictionResolved), a message carries a lifecycle cue ("+1", "done", "won't do", "revert": MessageIngested on
 * atlas.messages, issue 27 point 1; it may move a decision the Decisions page shows, so the next incremental run compares
 * the Decision entities with their lifecycle state and regenerates only if one moved), or an empty set retracted the contribution of a message the
 * current wiki was generated from (WikiStore.channelsCiting; an edit or a deletion). Messages that never had facts
 * (most chatter) mark nothing. It writes nothing else: the WikiScheduler regenerates the stale wikis once every
 * projector has caught up, so a run sees the whole batch (a sync, an import). Idempotent. ChannelDataDeleted (either
 * topic's copy) deletes the channel's wiki, in its place among the marks, unless the current version was generated
 * after the deletion was requested: wikis are generated, not projected, so a replay must not delete a wiki generated
 * from what came after the deletion.
 */
export const wikiProjector: Projector<
  WikiProjectorDeps,
  'MessageIngested' | 'FactsExtracted' | 'EntitiesExtracted' | 'ChannelDataDeleted' | 'ContradictionResolved'
> = {
  name: 'wiki',
  topics: [TOPICS.messages, TOPICS.facts, TOPICS.graph],
  handles: ['MessageIngested', 'FactsExtracted', 'EntitiesExtracted', 'ChannelDataDeleted', 'ContradictionResolved'],
  async handle(events, deps) {
    for (const run of runsOfType(events)) {
      // A lifecycle cue can move a decision shown on the Decisions page.
      if (run.type === 'MessageIngested') {
        const cued = run.events.filter((e) => signalOf(e.data) !== null).map((e) => e.data.channelId);
        if (cued.length > 0) await deps.wiki.markStale(...new Set(cued));
      } else if (run.type === 'ChannelDataDeleted') {
        // The copies forwarded to atlas.facts and atlas.graph delete the wiki in their place among the marks.
        for (const e of run.events) if (e.topic !== TOPICS.messages) await deleteWiki(e, deps);
      }
      // A resolved contradiction changes what the channel's facts say (superseded or not): its wiki is stale.
      else if (run.type === 'ContradictionResolved')
        await deps.wiki.markStale(...new Set(run.events.map((e) => e.data.channelId)));
      else await markChanged(run.events, deps);
    }
  },
};

const deleteWiki = async (e: StoredEvent<'ChannelDataDeleted'>, deps: WikiProjectorDeps): Promise<void> => {
  const { channelId, requestedAt } = e.data;
  const current = await deps.wiki.currentVersion(channelId);
  // requestedAt, not the append time: a replay of the facts projector forwards the command again, later.
  if (current && Date.parse(current.generated_at) > Date.parse(requestedAt)) return;
  await deps.wiki.deleteChannel(channelId, requestedAt);
};

/** Marks stale the channels whose shown knowledge a run of FactsExtracted | EntitiesExtracted changed. */
const markChanged = async (
  events: readonly AnyStoredEvent<'FactsExtracted' | 'EntitiesExtracted'>[],
  deps: WikiProjectorDeps,
): Promise<void> => {
  {
    const stale = new Set<string>();
    const emptied: { channelId: string; messageId: string }[] = [];
    for (const e of events) {
      const contributes =
        e.type === 'FactsExtracted'
          ? e.data.facts.length > 0
          : e.data.entities.length + e.data.relationships.length + e.data.supersessions.length > 0;
      if (contributes) stale.add(e.data.channelId);
      else emptied.push({ channelId: e.data.channelId, messageId: e.data.sourceMessageId });
    }
    const retracted = await deps.wiki.channelsCiting(emptied.filter((m) => !stale.has(m.channelId)));
    await deps.wiki.markStale(...stale, ...retracted);
  }
};

/** The wiki store as the generator and the scheduler use it. */
type WikiGeneratorStore = WikiGenerateDeps['wiki'] & { staleChannels(): Promise<string[]> };

/**
 * Stale channels regenerated together by generateStale (their reads and saves batched): enough to share each
 * statement among many channels, few enough that their data in memory stays small.
 */
export const STALE_BATCH = 64;

/**
 * Runs wiki generations in this process, one at a time per channel: a second request for a channel waits for the
 * first and then runs (so a refresh during the scheduler's run of that channel sees its result, never interleaves).
 * The wiki store is read through cachedWikiSink: the sources, clusters and pages of each channel's current version
 * stay in memory between runs of this (long-lived) process, and are re-read when another process saved a version;
 * the authors' vector sums (WikiGenerateDeps.authorSums) stay too, checked against the fact digests of each run.
 */
export class WikiGenerator {
  private readonly running = new Map<string, Promise<unknown>>();
  private readonly deps: WikiGenerateDeps & { wiki: WikiGeneratorStore };
  private readonly wikiEnabledMany: (channelIds: readonly string[]) => Promise<boolean[]>;
  private readonly embedderIdOf: () => string | undefined | Promise<string | undefined>;
  /** The authors' vector sums (WikiGenerateDeps.authorSums) per model: sums of one model never meet another's. */
  private readonly authorSums = new Map<string, NonNullable<WikiGenerateDeps['authorSums']>>();

  /**
   * `deps.wikiEnabledMany`: for each channel, in order, whether its settings allow wiki generation (spec "Channel
   * settings" wiki_enabled; default: always), read for all of a pass's channels at once. The scheduler's passes
   * (generateStale, rebuild) skip the channels it says no for; a stale one stays stale, so turning the setting on
   * again regenerates it. `deps.embedderId` may be a function (sync or async): the model of the active vector space,
   * read at the start of each run, so that a process that switched spaces while running (docs/models.md) clusters the new
   * model's vectors with that model's thresholds, and its next incremental run of a channel is full.
   */
  constructor(
    deps: Omit<WikiGenerateDeps, 'embedderId'> & {
      wiki: WikiGeneratorStore;
      embedderId?: string | (() => string | undefined | Promise<string | undefined>);
      wikiEnabledMany?: (channelIds: readonly string[]) => Promise<boolean[]>;
    },
  ) {
    const { wikiEnabledMany, embedderId, ...rest } = deps;
    const batched = batchedDeps(rest);
    this.deps = {
      ...batched,
      wiki: cachedWikiSink(batched.wiki),
      renderMemo: new RenderMemo(),
    };
    this.embedderIdOf = typeof embedderId === 'function' ? embedderId : () => embedderId;
    this.wikiEnabledMany = wikiEnabledMany ?? (async (ids) => ids.map(() => true));
  }

  /** The generation deps of one run: the current model and its authors' sums. */
  private async runDeps(): Promise<WikiGenerateDeps> {
    const embedderId = await this.embedderIdOf();
    const key = embedderId ?? '';
    const sums = this.authorSums.get(key) ?? new Map();
    this.authorSums.set(key, sums);
    return { ...this.deps, authorSums: sums, ...(embedderId === undefined ? {} : { embedderId }) };
  }

  /** The channels of `channelIds` whose settings allow wiki generation, in order. */
  private async enabled(channelIds: readonly string[]): Promise<string[]> {
    if (channelIds.length === 0) return [];
    const ok = await this.wikiEnabledMany(channelIds);
    return channelIds.filter((_, i) => ok[i]);
  }

  /**
   * Generates one channel's wiki (generateChannelWiki) after any run of that channel in progress. `now`: the
   * generation time (default: now).
   */
  generate(channelId: string, mode: 'full' | 'incremental', now?: Date): Promise<WikiGenerateResult> {
    const before = this.running.get(channelId) ?? Promise.resolve();
    const run = before
      .catch(() => undefined)
      .then(async () => generateChannelWiki(await this.runDeps(), channelId, { mode, ...(now ? { now } : {}) }));
    const tracked = run.finally(() => {
      if (this.running.get(channelId) === tracked) this.running.delete(channelId);
    });
    this.running.set(channelId, tracked);
    return run;
  }

  /**
   * Incremental generation of every channel whose wiki is stale (WikiStore.staleChannels) and enabled: STALE_BATCH
   * channels at a time (least recently generated first), run together so that their reads and their saves are
   * batched (batchedDeps: one statement per kind of call, one transaction for the saves). `now`: the generation time
   * (default: now). A channel that fails is reported in `failed` (its wiki stays stale and is retried next time); a
   * failed batched save fails every channel of its batch alike.
   */
  async generateStale(
    now?: Date,
  ): Promise<{ results: WikiGenerateResult[]; failed: { channelId: string; error: string }[] }> {
    const results: WikiGenerateResult[] = [];
    const failed: { channelId: string; error: string }[] = [];
    const ids = await this.enabled(await this.deps.wiki.staleChannels());
    // Together, STALE_BATCH at a time: their store calls are coalesced (batchedDeps), one statement for all of them.
    for (let i = 0; i < ids.length; i += STALE_BATCH) {
      const chunk = ids.slice(i, i + STALE_BATCH);
      const settled = await Promise.allSettled(chunk.map((id) => this.generate(id, 'incremental', now)));
      settled.forEach((r, k) => {
        if (r.status === 'fulfilled') results.push(r.value);
        else
          failed.push({ channelId: chunk[k]!, error: r.reason instanceof Error ? r.reason.message : String(r.reason) });
      });
    }
    return { results, failed };
  }

  /** Full generation of the given channels whose wiki is enabled (the daily rebuild: channels with facts), in turn. */
  async rebuild(
    channelIds: readonly string[],
  ): Promise<{ results: WikiGenerateResult[]; failed: { channelId: string; error: string }[] }> {
    const results: WikiGenerateResult[] = [];
    const failed: { channelId: string; error: string }[] = [];
    for (const channelId of await this.enabled(channelIds)) {
      try {
        results.push(await this.generate(channelId, 'full'));
      } catch (err) {
        failed.push({ channelId, error: err instanceof Error ? err.message : String(err) });
      }
    }
    return { results, failed };
  }
}

/**
 * The next run of a five-field cron expression in UTC (`off`: null). Throws AtlasError INVALID_REQUEST on an
 * invalid expression.
 */
export const nextCronRun = (expression: string, from: Date = new Date()): Date | null => {
  if (expression.trim() === 'off') return null;
  return cronJob(expression, WIKI_CRON).nextRun(from);
};

const WIKI_CRON = { name: 'WIKI_REBUILD_CRON' };

export interface WikiSchedulerOptions {
  /** Five-field cron expression (UTC) of the daily full rebuild; `off` disables it. Default `0 2 * * *`. */
  rebuildCron: string;
  /** How often to look for stale wikis, ms. */
  intervalMs: number;
  /** Whether every projector has caught up (lag 0): stale wikis are regenerated only then. */
  idle(): Promise<boolean>;
  /** The channels the daily rebuild regenerates (those with facts). */
  channels(): Promise<string[]>;
  log?: { info(msg: string): void; warn(msg: string): void };
}

/** A running wiki scheduler. */
export interface WikiScheduler {
  /** The next daily rebuild, or null when disabled (spec status field next_generation_scheduled). */
  nextRebuild(): Date | null;
  /** One pass now: regenerates the stale wikis if the projectors are idle (what the timer does). */
  tick(): Promise<void>;
  stop(): void;
}

/**
 * Starts the wiki's generation triggers (spec "Wiki generation"): every `intervalMs`, when the projectors are idle,
 * the stale wikis are regenerated incrementally (the "after each sync" trigger: a sync or an import marks them
 * stale through the wiki projector); at `rebuildCron` (02:00 UTC by default, croner) every channel with facts is
 * rebuilt in full. Passes never overlap. Failures are logged and retried on the next pass.
 */
export const startWikiScheduler = (generator: WikiGenerator, opts: WikiSchedulerOptions): WikiScheduler => {
  const log = opts.log ?? { info: () => undefined, warn: () => undefined };
  if (opts.rebuildCron.trim() !== 'off') cronJob(opts.rebuildCron, WIKI_CRON); // throws on an invalid expression
  // One pass at a time: a rebuild due during a refresh waits for it; at most one refresh waits in line.
  let chain: Promise<void> = Promise.resolve();
  let refreshQueued: Promise<void> | null = null;
  const serial = (work: () => Promise<void>): Promise<void> => {
    chain = chain
      .then(work)
      .catch((err: unknown) => log.warn(`wiki scheduler: ${err instanceof Error ? err.message : String(err)}`));
    return chain;
  };
  const report = (what: string, r: Awaited<ReturnType<WikiGenerator['generateStale']>>) => {
    const done = r.results.filter((x) => !x.skipped);
    if (done.length > 0)
      log.info(
        `wiki ${what}: ${done.length} channel(s) regenerated, ${done.reduce((s, x) => s + x.pagesRebuilt, 0)} pages rebuilt`,
      );
    for (const f of r.failed) log.warn(`wiki ${what} of ${f.channelId} failed: ${f.error}`);
  };
  const tick = (): Promise<void> => {
    if (refreshQueued) return refreshQueued;
    const queued = serial(async () => {
      refreshQueued = null;
      if (!(await opts.idle())) return;
      report('refresh', await generator.generateStale());
    });
    refreshQueued = queued;
    return queued;
  };
  const cron =
    opts.rebuildCron.trim() === 'off'
      ? null
      : cronJob(opts.rebuildCron, WIKI_CRON, () =>
          serial(async () => report('daily rebuild', await generator.rebuild(await opts.channels()))),
        );
  const timer = setInterval(() => void tick(), opts.intervalMs);
  timer.unref();
  return {
    nextRebuild: () => cron?.nextRun() ?? null,
    tick,
    stop: () => {
      clearInterval(timer);
      cron?.stop();
    },
  };
};
