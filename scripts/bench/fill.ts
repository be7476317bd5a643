/**
 * Filling the stores of a runtime with N facts quickly, the way bench-search does (copied from
 * scripts/bench-search.ts, whose own code is left as it is): the real facts of the three exports in
 * ../shared/data, projected once on a scratch runtime, are copied into as many channels `bench-<c>` as needed; each
 * unique text is embedded once with the local encoder and each copy's vector gets a little noise. The document,
 * keyword and vector stores are written directly (no events, no projectors). Unlike bench-search, each channel is
 * also registered in the document store (a channel-scoped ask answers 404 for an unknown channel).
 */
import path from 'node:path';
import { type Fact, type FactsExtracted, factUuid, loadConfig, messageUuid, TOPICS } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { embeddingText, filterFields, toKeywordDocs } from '@atlas/projectors';
import { appendPlan, openRuntime, type Runtime, startProjectors, waitForProjectors } from '@atlas/runtime';
import type { FactVector } from '@atlas/stores';

export const DATA = path.resolve(import.meta.dirname, '../../../shared/data');

export interface BaseFact {
  fact: Fact;
  sourceText: string;
  contextText: string;
}

/** Real facts with their sets' sourceText/contextText: the three exports projected once on a scratch runtime. */
export const realFacts = async (): Promise<BaseFact[]> => {
  const rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_PROVIDER: 'none' }));
  for (const rel of ['slack-clojurians-2018-02/export', 'slack-olake/export', 'discord-ethglobal']) {
    await appendPlan(rt, await planImport(path.join(DATA, rel)));
  }
  const subs = await startProjectors(rt);
  await waitForProjectors(rt);
  await Promise.all(subs.map((s) => s.stop()));
  const out: BaseFact[] = [];
  const group = 'bench-fill-reader';
  const reader = await rt.eventLog.subscribe({
    group,
    topics: [TOPICS.facts],
    handler: async (batch) => {
      for (const e of batch) {
        if (e.type !== 'FactsExtracted') continue;
        const set = e.data as FactsExtracted;
        for (const fact of set.facts) out.push({ fact, sourceText: set.sourceText, contextText: set.contextText });
      }
    },
  });
  for (;;) {
    const lag = await rt.eventLog.lag(group, [TOPICS.facts]);
    if (lag.length > 0 && lag.every((r) => r.lag === 0)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await reader.stop();
  await rt.close();
  return out;
};

const noisy = (v: number[], seed: number): number[] => {
  let s = seed;
  const rand = () => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return (s / 2_147_483_648 - 0.5) * 0.04;
  };
  const w = v.map((x) => x + rand());
  const n = Math.hypot(...w);
  return w.map((x) => x / n);
};

/** The local encoder's vectors of the base facts' texts (embedded once, shared by every size). */
export const embedBase = (rt: Runtime, base: readonly BaseFact[]): Promise<number[][]> =>
  rt.embeddings!.embedder.embed(base.map((b) => embeddingText(b.fact, b)));

/**
 * Grows the stores of a runtime with local embeddings from `from` to `size` facts (copies of `base`, vectors
 * `unique` from embedBase) in channels `bench-0`, `bench-1`, ...: a channel left partial at `from` is written again
 * whole (every write replaces by message id, so this equals a fill from scratch). Then refreshes the planner
 * statistics and warms the vector store (as `atlas start` does). Returns the number of channels, the seconds spent
 * loading and warming, and the seconds per store.
 */
export const fillFacts = async (
  rt: Runtime,
  base: readonly BaseFact[],
  unique: readonly number[][],
  size: number,
  from = 0,
): Promise<{ channels: number; loadSeconds: number; warmSeconds: number; perStore: Record<string, number> }> => {
  const { embedder, vectors } = rt.embeddings!;
  const perStore = { documents: 0, keyword: 0, vectors: 0 };
  const t0 = performance.now();
  const channels = Math.ceil(size / base.length);
  for (let c = Math.floor(from / base.length); c < channels; c++) {
    const channelId = `bench-${c}`;
    await rt.documents.upsertChannel(
      {
        platform: 'platform_a',
        workspaceId: 'bench',
        workspaceName: 'bench',
        channelId,
        name: channelId,
        isPrivate: false,
        memberCount: 1,
        topic: null,
        createdAt: null,
        source: 'import',
      },
      new Date(),
    );
    const n = Math.min(base.length, size - c * base.length);
    const sets: FactsExtracted[] = [];
    const points: { messageId: string; points: FactVector[] }[] = [];
    for (let i = 0; i < n; i++) {
      const { fact: f, sourceText, contextText } = base[i]!;
      const messageId = messageUuid('platform_a', channelId, String(i));
      const fact = { ...f, factId: factUuid(messageId, f.memoryText) };
      sets.push({
        messageId,
        platform: 'platform_a',
        channelId,
        sourceMessageId: String(i),
        extractor: 'bench',
        extractedAt: f.validAt,
        facts: [fact],
        sourceText,
        contextText,
      });
      points.push({
        messageId,
        points: [
          {
            ...filterFields(sets[sets.length - 1]!, fact),
            model: embedder.id,
            vector: c === 0 ? unique[i]! : noisy(unique[i]!, c * 100_003 + i),
          },
        ],
      });
    }
    let t = performance.now();
    const lap = (k: keyof typeof perStore) => {
      const now = performance.now();
      perStore[k] += (now - t) / 1000;
      t = now;
    };
    await rt.documents.replaceFacts(sets);
    lap('documents');
    await rt.keyword.replaceForMessages(sets.map((s) => ({ messageId: s.messageId, docs: toKeywordDocs(s) })));
    lap('keyword');
    await vectors.replaceForMessages(points);
    lap('vectors');
  }
  await rt.database.refreshStatistics(); // as `atlas start` does at start and every 5 minutes
  const loadSeconds = (performance.now() - t0) / 1000;
  const w0 = performance.now();
  await vectors.warm?.();
  return { channels, loadSeconds, warmSeconds: (performance.now() - w0) / 1000, perStore };
};

/** The p-th percentile (nearest rank below) of a sample, as bench-search computes it. */
export const percentile = (xs: readonly number[], p: number): number =>
  xs.length === 0 ? Number.NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

/** A Markdown table as the other benches print it. */
export const table = (head: string[], rows: string[][]): string => {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
};
