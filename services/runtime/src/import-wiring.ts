import type { ImportPorts, ImportProgressReport, ImportResult, ValidatedImport } from '@atlas/api';
import { AtlasError, TOPICS } from '@atlas/core';
import { planImport, zipLimitsOf } from '@atlas/platforms';
import { appendPlan } from './drain.js';
import { endOffsets, type ImportedOffsets, projectionCounts, readProjection } from './import-projection.js';
import type { Runtime } from './runtime.js';

type Plan = Awaited<ReturnType<typeof planImport>>;

const MIB = 2 ** 20;

/** The projection stages in order, and the count of projectionCounts each shows (as `atlas import` shows them). */
const PROJECTION_STAGES = [
  ['extracting facts', 'facts'],
  ['indexing', 'indexing'],
  ['building the graph', 'graph'],
] as const;

/**
 * The browser import's ports on a running runtime (POST /api/imports; docs/import.md "Importing from the browser"):
 * the same import as `atlas import` (services/cli commands/import.ts), inside the server process that holds the data
 * dir. `validate` is planImport with the configured archive bounds (IMPORT_ZIP_MAX_*): every file read and checked,
 * nothing written, IMPORT_FAILED naming a bad file. `apply` is appendPlan (one atomic append of what is new or changed:
 * a re-import adds nothing), then a wait until the projectors running beside the API (this process's, or those of
 * other processes on the same log) have projected the import, counted in messages as the CLI counts them
 * (projectionCounts, read every `pollMs`, default 250 ms). Stale wikis are the server's wiki scheduler's to regenerate.
 */
export const serverImports = (rt: Runtime, opts: { pollMs?: number } = {}): ImportPorts => ({
  maxUploadBytes: Math.floor(rt.cfg.IMPORT_MAX_UPLOAD_MB * MIB),
  validate: async (path, report) => {
    const t0 = performance.now();
    const plan = await planImport(path, {
      zipLimits: zipLimitsOf(rt.cfg),
      onFileRead: (done, total) => report({ stage: 'reading files', unit: 'files', done, total }),
    });
    const validated: ValidatedImport = {
      platform: plan.format === 'platform_a_export' ? 'platform_a' : 'platform_b',
      channels: plan.channels.length,
      messages: plan.messages.length,
      apply: (onProgress, signal) => applyImport(rt, plan, onProgress, signal, { pollMs: opts.pollMs ?? 250, t0 }),
    };
    return validated;
  },
});

/**
 * Appends `plan` (appendPlan) and waits for its projection, reporting `checking for changes`, `appending`, then each
 * projection stage (the earliest stage not all messages are through; stages only move forward, counts never go
 * back). Resolves with the CLI's summary (`seconds` from `t0`, when validation began, a performance.now() reading). Throws STORE_UNAVAILABLE when `signal` is aborted before the projection is
 * done (what was appended stays, and is projected when the projectors run again), and what the stores throw.
 */
const applyImport = async (
  rt: Runtime,
  plan: Plan,
  report: (p: ImportProgressReport) => void,
  signal: AbortSignal,
  { pollMs, t0 }: { pollMs: number; t0: number },
): Promise<ImportResult> => {
  const total = plan.messages.length;
  const messages = (stage: ImportProgressReport['stage'], done: number) =>
    report({ stage, unit: 'messages', done, total });
  messages('checking for changes', 0);
  const deadBefore = (await rt.deadLetters.counts()).pending;
  const baseline = { facts: await endOffsets(rt, TOPICS.facts), graph: await endOffsets(rt, TOPICS.graph) };
  const { appended, unchanged, messageOffsets } = await appendPlan(rt, plan, (n) =>
    messages(n < total ? 'checking for changes' : 'appending', n < total ? n : 0),
  );
  messages('appending', total);
  const imported: ImportedOffsets = { messages: messageOffsets, baseline };
  let index = 0;
  let shown = unchanged;
  for (;;) {
    const counts = projectionCounts(imported, await readProjection(rt));
    const through = (i: number) => unchanged + counts[PROJECTION_STAGES[i]![1]];
    while (index < PROJECTION_STAGES.length - 1 && through(index) >= total) {
      index++;
      shown = unchanged;
    }
    shown = Math.max(shown, through(index));
    messages(PROJECTION_STAGES[index]![0], shown);
    if (index === PROJECTION_STAGES.length - 1 && shown >= total) break;
    if (signal.aborted)
      throw new AtlasError(
        'STORE_UNAVAILABLE',
        'the server stopped before the import was projected: its messages are stored and are projected when Atlas starts again',
        { expose: true },
      );
    await new Promise((r) => setTimeout(r, pollMs));
  }
  await rt.database.refreshStatistics().catch(() => undefined); // the planner sees the imported rows (PGlite)
  const channelIds = new Set(plan.channels.map((c) => c.channelId));
  const facts = (await rt.documents.listChannels())
    .filter((c) => channelIds.has(c.id))
    .reduce((s, c) => s + c.fact_count, 0);
  return {
    format: plan.format,
    channels: plan.channels.length,
    messages: total,
    new_or_changed: appended,
    unchanged,
    skipped: plan.skipped,
    facts,
    dead_lettered: Math.max(0, (await rt.deadLetters.counts()).pending - deadBefore),
    seconds: Math.round((performance.now() - t0) / 10) / 100,
  };
};
