import { type Config, TOPICS } from '@atlas/core';
import { planImport, zipLimitsOf } from '@atlas/platforms';
import { appendPlan, drainProjectors, openRuntime, type Runtime } from '@atlas/runtime';
import { acquireLock } from '../lock.js';
import {
  APPEND_ONLY_PHASES,
  barSink,
  endOffsets,
  IMPORT_PHASES,
  type ImportedOffsets,
  type ImportPhase,
  ImportProgress,
  lineSink,
  projectionCounts,
  readProjection,
} from './import-progress.js';

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

/** The projection phases in order, and the count of projectionCounts each shows. */
const PROJECTION_PHASES = [
  ['extracting facts', 'facts'],
  ['indexing', 'indexing'],
  ['building the graph', 'graph'],
] as const satisfies readonly (readonly [ImportPhase, string])[];

/** How drainWithProgress reports: the display, the import's offsets, and its messages the projection need not touch. */
export interface ProjectionWatch {
  progress: ImportProgress;
  imported: ImportedOffsets;
  /** Messages of the export that were not appended (unchanged): done in every phase from the start. */
  unchanged: number;
  /** How often to read the groups' offsets, ms (default 250). */
  pollMs?: number;
}

/**
 * Runs the projectors until every group has caught up (the runtime's drainProjectors). With a watch, the display shows
 * the projection phases in order (extracting facts, indexing, building the graph), each counting the messages through
 * it (projectionCounts) plus the unchanged ones; a phase gives way to the next once all are through it.
 */
export const drainWithProgress = async (rt: Runtime, watch: ProjectionWatch | false = false): Promise<void> => {
  if (!watch) return drainProjectors(rt);
  let index = 0;
  const show = async (): Promise<void> => {
    const counts = projectionCounts(watch.imported, await readProjection(rt));
    const total = watch.progress.current?.total ?? 0;
    for (;;) {
      const [name, key] = PROJECTION_PHASES[index]!;
      const done = watch.unchanged + counts[key];
      if (watch.progress.current?.name !== name) watch.progress.phase(name, { done });
      else watch.progress.update(done);
      if (done < total || index === PROJECTION_PHASES.length - 1) return;
      index++;
    }
  };
  await drainProjectors(rt, 0, { onPoll: show, pollMs: watch.pollMs ?? 250 });
};

/**
 * Regenerates the wikis the import made stale (the wiki projector marked them), now that every projector is idle.
 * With a display: the "generating wikis" phase, counting the messages of the import's channels whose wiki is no
 * longer stale (read every second while the generator runs; batched saves make it move a batch at a time).
 */
const generateWikis = async (
  rt: Runtime,
  plan: Awaited<ReturnType<typeof planImport>>,
  progress: ImportProgress | null,
) => {
  const generator = rt.wikiGenerator;
  const total = plan.messages.length;
  const weight = (ids: readonly string[]) => ids.reduce((n, id) => n + (plan.perChannel[id]?.kept ?? 0), 0);
  const staleOfImport = async () => (await rt.wiki.staleChannels()).filter((id) => id in plan.perChannel);
  if (!generator) {
    progress?.phase('generating wikis', { done: total });
    return null;
  }
  const stale = new Set(progress ? await staleOfImport() : []);
  progress?.phase('generating wikis', { done: total - weight([...stale]) });
  const timer =
    progress &&
    setInterval(() => {
      staleOfImport()
        .then((now) => progress.update(total - weight(now.filter((id) => stale.has(id)))))
        .catch(() => undefined); // a missed reading only delays the display
    }, 1000);
  try {
    return await generator.generateStale();
  } finally {
    if (timer) clearInterval(timer);
  }
};

/** How `atlas import` shows progress: a bar (stderr is a terminal), plain lines every `intervalS` seconds, or none. */
export type ProgressMode = 'bar' | 'lines' | false;

/**
 * `atlas import <path>`: detects the export format, plans everything (a bad file, or a zip beyond the archive bounds,
 * fails the whole import before anything is written), appends the events atomically, and projects them. `progress`:
 * one display for the whole import (import-progress.ts); `true` picks a bar on a terminal, else lines.
 */
export const importCommand = async (
  cfg: Config,
  source: string,
  opts: { progress: ProgressMode | boolean; project?: boolean },
): Promise<ImportSummary> => {
  const t0 = performance.now();
  const project = opts.project !== false;
  const mode = opts.progress === true ? (process.stderr.isTTY ? 'bar' : 'lines') : opts.progress;
  const progress = mode
    ? new ImportProgress(
        project ? IMPORT_PHASES : APPEND_ONLY_PHASES,
        mode === 'bar'
          ? barSink()
          : lineSink((line) => process.stderr.write(`${line}\n`), cfg.IMPORT_PROGRESS_INTERVAL_S * 1000),
      )
    : null;
  let ok = false;
  try {
    const plan = await planImport(source, {
      zipLimits: zipLimitsOf(cfg),
      onFileRead: (read, total) => {
        if (progress?.current) progress.update(read);
        else progress?.phase('reading files', { total, done: read });
      },
    });
    progress?.messages(plan.messages.length);
    progress?.phase('opening the store');
    const release = cfg.DATABASE_URL ? () => undefined : acquireLock(cfg.ATLAS_DATA_DIR, { command: 'import' });
    const rt = await openRuntime(cfg).catch((e) => {
      release();
      throw e;
    });
    try {
      const deadBefore = (await rt.deadLetters.counts()).pending;
      progress?.phase('checking for changes');
      const baseline = project && {
        facts: await endOffsets(rt, TOPICS.facts),
        graph: await endOffsets(rt, TOPICS.graph),
      };
      const { appended, unchanged, messageOffsets } = await appendPlan(rt, plan, (n) => {
        progress?.update(n);
        if (n === plan.messages.length) progress?.phase('appending');
      });
      progress?.update(plan.messages.length);
      if (baseline) {
        await drainWithProgress(
          rt,
          progress ? { progress, imported: { messages: messageOffsets, baseline }, unchanged } : false,
        );
      }
      // The wikis the import made stale (wiki projector) are regenerated incrementally now that every projector is idle.
      const generated = project ? await generateWikis(rt, plan, progress) : null;
      const regenerated = generated?.results.filter((r) => !r.skipped) ?? [];
      const channelIds = new Set(plan.channels.map((c) => c.channelId));
      const facts = (await rt.documents.listChannels())
        .filter((c) => channelIds.has(c.id))
        .reduce((s, c) => s + c.fact_count, 0);
      const seconds = (performance.now() - t0) / 1000;
      ok = true;
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
  } finally {
    progress?.close(ok);
  }
};
