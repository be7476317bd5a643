import { type Config, type NewEvent, TOPICS } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { SingleBar } from 'cli-progress';
import { acquireLock } from '../lock.js';
import { openRuntime, projectorLag, type Runtime, startProjectors } from '../runtime.js';

export interface ImportSummary {
  format: string;
  channels: number;
  messages: number;
  newOrChanged: number;
  unchanged: number;
  skipped: Record<string, number>;
  facts: number;
  /** Wikis regenerated after the projectors caught up (the "after each sync" trigger), and pages rebuilt. */
  wikis: { channels: number; pagesRebuilt: number; failed: number } | null;
  seconds: number;
  messagesPerSecond: number;
  /** Events this import's projection sent to the dead-letter queue (e.g. fact extraction with the LLM down). */
  deadLettered: number;
}

/**
 * Appends an import plan's events in ONE atomic append (nothing of a failed import is applied):
 * a ChannelDiscovered per channel, and a MessageIngested per message that is new or whose content
 * hash changed since the last import (so a re-import adds nothing). Returns the appended count.
 */
export const appendPlan = async (
  rt: Runtime,
  plan: Awaited<ReturnType<typeof planImport>>,
): Promise<{ appended: number; unchanged: number }> => {
  const events: NewEvent[] = plan.channels.map((c) => ({ type: 'ChannelDiscovered', key: c.channelId, data: c }));
  let unchanged = 0;
  const hashes = new Map<string, Map<string, string>>();
  for (const m of plan.messages) {
    let known = hashes.get(m.channelId);
    if (!known) {
      known = await rt.documents.messageHashes(m.channelId);
      hashes.set(m.channelId, known);
    }
    if (known.get(m.platformMessageId) === m.contentHash) unchanged++;
    else events.push({ type: 'MessageIngested', key: m.channelId, data: m });
  }
  await rt.eventLog.append(TOPICS.messages, events);
  return { appended: events.length - plan.channels.length, unchanged };
};

/** Runs the projectors until every group has caught up, showing progress on a TTY. */
export const drainProjectors = async (rt: Runtime, total: number, showProgress: boolean): Promise<void> => {
  const subs = await startProjectors(rt);
  const bar = showProgress
    ? new SingleBar({ format: 'projecting {bar} {percentage}% | {value}/{total} events | {eta_formatted} left' })
    : null;
  const startLag = Math.max(await projectorLag(rt), 1);
  bar?.start(Math.max(startLag, total), 0);
  try {
    for (;;) {
      const lag = await projectorLag(rt);
      bar?.setTotal(Math.max(startLag, lag));
      bar?.update(Math.max(0, Math.max(startLag, lag) - lag));
      if (lag === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    bar?.stop();
    await Promise.all(subs.map((s) => s.stop()));
  }
  await rt.database.refreshStatistics(); // the planner sees the imported rows (PGlite has no autovacuum)
};

/**
 * `atlas import <path>`: detects the export format, plans everything (a bad file fails the whole
 * import before anything is written), appends the events atomically, and projects them.
 */
export const importCommand = async (
  cfg: Config,
  source: string,
  opts: { progress: boolean; project?: boolean },
): Promise<ImportSummary> => {
  const t0 = performance.now();
  const plan = await planImport(source);
  const release = cfg.DATABASE_URL ? () => undefined : acquireLock(cfg.ATLAS_DATA_DIR, { command: 'import' });
  const rt = await openRuntime(cfg).catch((e) => {
    release();
    throw e;
  });
  try {
    const deadBefore = (await rt.deadLetters.counts()).pending;
    const { appended, unchanged } = await appendPlan(rt, plan);
    if (opts.project !== false) await drainProjectors(rt, appended, opts.progress);
    // The wikis the import made stale (wiki projector) are regenerated incrementally now that every projector is idle.
    const generated = opts.project !== false && rt.wikiGenerator ? await rt.wikiGenerator.generateStale() : null;
    const regenerated = generated?.results.filter((r) => !r.skipped) ?? [];
    const channelIds = new Set(plan.channels.map((c) => c.channelId));
    const facts = (await rt.documents.listChannels())
      .filter((c) => channelIds.has(c.id))
      .reduce((s, c) => s + c.fact_count, 0);
    const seconds = (performance.now() - t0) / 1000;
    return {
      format: plan.format,
      channels: plan.channels.length,
      messages: plan.messages.length,
      newOrChanged: appended,
      unchanged,
      skipped: plan.skipped,
      facts,
      wikis: generated && {
        channels: regenerated.length,
        pagesRebuilt: regenerated.reduce((n, r) => n + r.pagesRebuilt, 0),
        failed: generated.failed.length,
      },
      seconds: Math.round(seconds * 100) / 100,
      messagesPerSecond: Math.round(plan.messages.length / seconds),
      deadLettered: Math.max(0, (await rt.deadLetters.counts()).pending - deadBefore),
    };
  } finally {
    await rt.close();
    release();
  }
};
