import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deterministicId } from '@atlas/core';
import { type Embedder, fetchModel, LocalSentenceEncoder, ONNX_MODELS, OnnxEmbedder } from '@atlas/providers';
import { describe, expect, it } from 'vitest';
import {
  AUTHOR_CENTRING,
  assignFacts,
  authorCentred,
  authorCentringOf,
  CLUSTER_PARAMS,
  type ClusterParams,
  centredCoherences,
  clusterParamsOf,
  clusterStats,
  coherence,
  cosine,
  DEFAULT_CLUSTER_PARAMS,
  E5_AUTHOR_CENTRING,
  E5_CLUSTER_PARAMS,
  E5_EMBEDDER_ID,
  type FactVector,
  healthPass,
  USE_LITE_EMBEDDER_ID,
} from './index.js';
import type { TopicCluster } from './types.js';

const DIM = 16;
/** Raw cosine for the synthetic rule tests (centring is tested on its own). */
const P: ClusterParams = { ...DEFAULT_CLUSTER_PARAMS, assignThreshold: 0.7, maxSize: 10, minSize: 1, center: false };

/** Deterministic pseudo-random generator (mulberry32). */
const rng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

/** Unit basis vector e_i (+ noise of amplitude `noise` in every coordinate). */
const axis = (i: number, noise = 0, r = rng(i + 1)) => {
  const v = Array.from({ length: DIM }, () => (r() - 0.5) * noise);
  v[i] = (v[i] ?? 0) + 1;
  return v;
};

const facts = (prefix: string, n: number, at: (k: number) => number[], channel = 'C1'): FactVector[] =>
  Array.from({ length: n }, (_, k) => ({ id: `${prefix}${k}`, channel_id: channel, vector: at(k) }));

const vecMap = (fs: FactVector[]) => new Map(fs.map((f) => [f.id, [...f.vector]]));

const clusterOf = (id: string, fs: FactVector[], over: Partial<TopicCluster> = {}): TopicCluster => {
  const sum = new Array<number>(DIM).fill(0);
  for (const f of fs) {
    const n = Math.hypot(...f.vector);
    f.vector.forEach((x, i) => {
      sum[i] = (sum[i] ?? 0) + x / n;
    });
  }
  const len = Math.hypot(...sum);
  return {
    id,
    channel_id: 'C1',
    centroid: sum.map((x) => x / len),
    member_ids: fs.map((f) => f.id),
    coherence: len / fs.length,
    parent_id: null,
    ...over,
  };
};

describe('coherence', () => {
  it('is 1 for identical vectors, the mean cosine to the mean otherwise', () => {
    expect(coherence([axis(0), axis(0)])).toBeCloseTo(1, 9);
    // two orthogonal unit vectors: mean is at 45 degrees to both
    expect(coherence([axis(0), axis(1)])).toBeCloseTo(Math.SQRT1_2, 9);
    expect(coherence([])).toBe(0);
  });
});

describe('assignFacts', () => {
  it('joins the nearest cluster at or above the threshold, seeds a new one below it', () => {
    const a = facts('a', 3, (k) => axis(0, 0.2, rng(k + 10)));
    const b = facts('b', 2, (k) => axis(1, 0.2, rng(k + 20)));
    const r = assignFacts([], [...a, ...b], P);
    expect(r.clusters).toHaveLength(2);
    expect(r.clusters[0]!.member_ids).toEqual(['a0', 'a1', 'a2']);
    expect(r.clusters[1]!.member_ids).toEqual(['b0', 'b1']);
    expect(r.clusters[0]!.id).toBe(deterministicId('cluster', 'C1', 'a0'));
    expect(r.touched).toEqual(r.clusters.map((c) => c.id));
    // a vector at cosine ~0.6 from axis 0 stays out at threshold 0.7, joins at 0.5
    const mid = { id: 'm', channel_id: 'C1', vector: [0.6, 0, 0.8, ...new Array(DIM - 3).fill(0)] };
    expect(assignFacts(r.clusters, [mid], P).clusters).toHaveLength(3);
    const joined = assignFacts(r.clusters, [mid], { assignThreshold: 0.5 });
    expect(joined.clusters).toHaveLength(2);
    expect(joined.clusters[0]!.member_ids).toContain('m');
    expect(joined.touched).toEqual([r.clusters[0]!.id]);
  });

  it('keeps the centroid and coherence exact (unit-length mean) as members join', () => {
    const fs = facts('x', 6, (k) => axis(0, 0.8, rng(k + 30)));
    const r = assignFacts([], fs, { assignThreshold: -1 });
    expect(r.clusters).toHaveLength(1);
    const exact = clusterOf('x', fs);
    r.clusters[0]!.centroid.forEach((x, i) => {
      expect(x).toBeCloseTo(exact.centroid[i]!, 9);
    });
    expect(r.clusters[0]!.coherence).toBeCloseTo(coherence(fs.map((f) => [...f.vector])), 9);
  });

  it('never joins a cluster of another channel', () => {
    const r = assignFacts([], [...facts('a', 2, () => axis(0)), ...facts('b', 2, () => axis(0), 'C2')], P);
    expect(r.clusters.map((c) => [c.channel_id, c.member_ids])).toEqual([
      ['C1', ['a0', 'a1']],
      ['C2', ['b0', 'b1']],
    ]);
  });

  it('is idempotent: re-assigning members changes nothing', () => {
    const fs = facts('a', 5, (k) => axis(k % 2, 0.3, rng(k)));
    const r1 = assignFacts([], fs, P);
    const r2 = assignFacts(r1.clusters, fs, P);
    expect(r2.clusters).toEqual(r1.clusters);
    expect(r2.touched).toEqual([]);
    // duplicates within one batch too
    expect(assignFacts([], [...fs, ...fs], P).clusters).toEqual(r1.clusters);
  });

  it('centres on the channel mean: topics sharing a strong common direction come apart', () => {
    // every vector = 3 * e0 (shared) + e1 or e2 (topic) + noise: raw cosine across topics ~0.9
    const topic = (t: number) => (k: number) => {
      const v = axis(0, 0.3, rng(k * 7 + t));
      v[0] = 3;
      v[t] = (v[t] ?? 0) + 1;
      return v;
    };
    const a = facts('a', 12, topic(1));
    const b = facts('b', 12, topic(2));
    const fs = a.flatMap((f, i) => [f, b[i]!]);
    expect(cosine(a[0]!.vector as number[], b[0]!.vector as number[])).toBeGreaterThan(0.85);
    expect(assignFacts([], fs, { ...P, center: false }).clusters).toHaveLength(1);
    const centred = assignFacts([], fs, DEFAULT_CLUSTER_PARAMS).clusters;
    expect(centred.map((c) => [...c.member_ids].sort())).toEqual([
      a.map((f) => f.id).sort(),
      b.map((f) => f.id).sort(),
    ]);
    // the health pass keeps them apart (their centred means point opposite ways, no merge)
    const h = healthPass(centred, vecMap(fs), DEFAULT_CLUSTER_PARAMS);
    expect(h.clusters).toHaveLength(2);
    expect(h.counts.merged).toBe(0);
  });

  it('is deterministic', () => {
    const fs = facts('a', 30, (k) => axis(k % 4, 0.6, rng(k)));
    expect(assignFacts([], fs, P)).toEqual(assignFacts([], fs, P));
  });
});

describe('healthPass', () => {
  it('deletes clusters with 0 members (and drops members without a vector)', () => {
    const a = facts('a', 3, () => axis(0));
    const r = healthPass(
      [clusterOf('A', a), { ...clusterOf('E', a), member_ids: [] }, { ...clusterOf('G', a), member_ids: ['gone'] }],
      vecMap(a),
      P,
    );
    expect(r.clusters.map((c) => c.id)).toEqual(['A']);
    expect(r.counts).toMatchObject({ deleted: 2, dropped: 1, split: 0, merged: 0 });
  });

  it('splits an oversized cluster with k-means into parts with parent_id', () => {
    // 2 sub-topics of 8 and 7 members, one cluster of 15 > maxSize 10
    const fs = [...facts('a', 8, (k) => axis(0, 0.3, rng(k + 1))), ...facts('b', 7, (k) => axis(1, 0.3, rng(k + 50)))];
    const big = clusterOf('BIG', fs);
    const r = healthPass([big], vecMap(fs), { ...P, mergeThreshold: 0.99 });
    expect(r.counts.split).toBe(1);
    expect(r.clusters).toHaveLength(2);
    for (const c of r.clusters) {
      expect(c.parent_id).toBe('BIG');
      expect(c.member_ids.length).toBeLessThanOrEqual(P.maxSize);
      expect(c.coherence).toBeGreaterThan(big.coherence);
    }
    expect(r.clusters.map((c) => [...c.member_ids].sort())).toEqual([
      fs.slice(0, 8).map((f) => f.id),
      fs.slice(8).map((f) => f.id),
    ]);
  });

  it('splits a cluster of many equal vectors into parts of at most maxSize', () => {
    const fs = facts('s', 25, () => axis(3));
    const r = healthPass([clusterOf('S', fs)], vecMap(fs), { ...P, mergeThreshold: 1.1 });
    expect(r.clusters.map((c) => c.member_ids.length).sort()).toEqual([8, 8, 9]);
    expect(new Set(r.clusters.flatMap((c) => c.member_ids)).size).toBe(25);
  });

  it('merges clusters whose centroids have cosine above mergeThreshold, the bigger keeping its id', () => {
    const a = facts('a', 4, (k) => axis(0, 0.1, rng(k + 1)));
    const b = facts('b', 2, (k) => axis(0, 0.1, rng(k + 9)));
    const c = facts('c', 3, (k) => axis(5, 0.1, rng(k + 19)));
    const all = [...a, ...b, ...c];
    const r = healthPass([clusterOf('B', b), clusterOf('A', a), clusterOf('C', c)], vecMap(all), P);
    expect(r.counts.merged).toBe(1);
    expect(r.clusters.map((x) => [x.id, x.member_ids.length])).toEqual([
      ['A', 6],
      ['C', 3],
    ]);
    // not above the threshold: no merge
    expect(
      healthPass([clusterOf('B', b), clusterOf('A', a)], vecMap(all), { ...P, mergeThreshold: 0.9999 }).counts.merged,
    ).toBe(0);
  });

  it('re-clusters an incoherent cluster: members rejoin the coherent clusters or seed new ones', () => {
    const a = facts('a', 4, (k) => axis(0, 0.1, rng(k + 1)));
    const b = facts('b', 4, (k) => axis(1, 0.1, rng(k + 5)));
    // a grab bag: 1 fact near axis 0, 1 near axis 1, 5 far apart on axes 6..10
    const mix = [
      ...facts('m0_', 1, (k) => axis(0, 0.1, rng(k + 40))),
      ...facts('m1_', 1, (k) => axis(1, 0.1, rng(k + 44))),
      ...facts('m6_', 5, (k) => axis(6 + k, 0.1, rng(k + 48))),
    ];
    const bag = clusterOf('BAG', mix);
    expect(bag.coherence).toBeLessThan(P.minCoherence);
    const r = healthPass([clusterOf('A', a), clusterOf('B', b), bag], vecMap([...a, ...b, ...mix]), P);
    expect(r.counts.reclustered).toBe(1);
    const by = new Map(r.clusters.map((c) => [c.id, c]));
    expect(by.has('BAG')).toBe(false);
    expect(by.get('A')?.member_ids).toEqual(expect.arrayContaining(['m0_0']));
    expect(by.get('B')?.member_ids).toEqual(expect.arrayContaining(['m1_0']));
    expect(r.clusters).toHaveLength(7); // A, B and the 5 far facts each on their own
    for (const c of r.clusters) expect(c.coherence).toBeGreaterThanOrEqual(P.minCoherence);
  });

  it('folds members of tiny clusters into a near bigger cluster, keeps far ones', () => {
    const a = facts('a', 5, (k) => axis(0, 0.2, rng(k + 1)));
    const near = { id: 'n', channel_id: 'C1', vector: [0.5, 0.2, 0.3, ...new Array(DIM - 3).fill(0)] };
    const far = { id: 'f', channel_id: 'C1', vector: axis(9) };
    const params = { ...P, minSize: 3, foldThreshold: 0.4, mergeThreshold: 0.99 };
    const r = healthPass(
      [clusterOf('A', a), clusterOf('N', [near]), clusterOf('F', [far])],
      vecMap([...a, near, far]),
      params,
    );
    expect(r.counts.folded).toBe(1);
    expect(r.clusters.map((c) => [c.id, c.member_ids])).toEqual([
      ['A', ['a0', 'a1', 'a2', 'a3', 'a4', 'n']],
      ['F', ['f']],
    ]);
  });

  it('is deterministic (seeded k-means) and returns exact centroids', () => {
    const fs = facts('d', 60, (k) => axis(k % 5, 0.9, rng(k + 100)));
    const start = assignFacts([], fs, { assignThreshold: -1 }).clusters; // one cluster of 60 > 10
    const r1 = healthPass(start, vecMap(fs), P);
    const r2 = healthPass(structuredClone(start), vecMap(fs), P);
    expect(r1).toEqual(r2);
    expect(r1.counts.split).toBe(1);
    for (const c of r1.clusters) {
      expect(c.member_ids.length).toBeLessThanOrEqual(P.maxSize);
      expect(c.coherence).toBeCloseTo(
        coherence(c.member_ids.map((m) => fs.find((f) => f.id === m)?.vector as number[])),
        9,
      );
    }
    expect(clusterStats(r1.clusters, fs.length).assignedShare).toBe(1);
  });
});

describe('clusterStats', () => {
  it('counts clusters, coherence, assigned and topic shares, median size', () => {
    const a = facts('a', 4, () => axis(0));
    const b = facts('b', 1, () => axis(1));
    const s = clusterStats([clusterOf('A', a), clusterOf('B', b)], 10, 3);
    expect(s).toMatchObject({ clusters: 2, assignedShare: 0.5, topicShare: 0.4, medianSize: 2.5, singletons: 1 });
    expect(s.meanCoherence).toBeCloseTo(1, 9);
    expect(cosine(axis(0), axis(1))).toBe(0);
  });
});

const DAY = path.resolve(
  import.meta.dirname,
  '../../../../shared/data/slack-clojurians-2018-02/export/clojure/2018-02-04.json',
);

describe('parameters per embedder', () => {
  it('picks the USE-lite values for USE-lite, unknown embedders and none; the e5 ones for e5', () => {
    expect(clusterParamsOf(USE_LITE_EMBEDDER_ID)).toBe(DEFAULT_CLUSTER_PARAMS);
    expect(clusterParamsOf(undefined)).toBe(DEFAULT_CLUSTER_PARAMS);
    expect(clusterParamsOf('openai:text-embedding-3-small')).toBe(DEFAULT_CLUSTER_PARAMS);
    expect(clusterParamsOf('toString')).toBe(DEFAULT_CLUSTER_PARAMS);
    expect(clusterParamsOf(E5_EMBEDDER_ID)).toBe(E5_CLUSTER_PARAMS);
    expect(CLUSTER_PARAMS[E5_EMBEDDER_ID]!.centredCoherence).toBe(true);
    expect(DEFAULT_CLUSTER_PARAMS.centredCoherence).toBe(false);
    expect(authorCentringOf(USE_LITE_EMBEDDER_ID)).toBe(AUTHOR_CENTRING);
    expect(authorCentringOf(undefined)).toBe(AUTHOR_CENTRING);
    expect(authorCentringOf(E5_EMBEDDER_ID)).toBe(E5_AUTHOR_CENTRING);
  });
});

describe('centredCoherence (the minCoherence rule on channel-centred vectors)', () => {
  // 40 facts in a narrow cone (a shared direction plus small noise, as e5 places a channel): any bag of them has a
  // raw coherence far above 0.4, but centred they point every which way.
  const r = rng(7);
  const fs: FactVector[] = Array.from({ length: 40 }, (_, i) => {
    const v = Array.from({ length: DIM }, () => (r() - 0.5) * 0.3);
    v[0] = 1;
    return { id: `f${i}`, channel_id: 'C', vector: v };
  });
  const bag: TopicCluster = {
    id: 'bag',
    channel_id: 'C',
    centroid: new Array<number>(DIM).fill(0),
    member_ids: fs.map((f) => f.id),
    coherence: 1,
    parent_id: null,
  };
  const params: ClusterParams = { ...DEFAULT_CLUSTER_PARAMS, maxSize: 100 };

  it('re-clusters a raw-coherent bag of unrelated facts only when read centred', () => {
    const raw = healthPass([bag], vecMap(fs), { ...params, centredCoherence: false });
    expect(raw.counts.reclustered).toBe(0);
    expect(raw.clusters).toHaveLength(1);
    expect(raw.clusters[0]!.coherence).toBeGreaterThan(0.9);
    expect(centredCoherences(raw.clusters, vecMap(fs))[0]).toBeLessThan(0.4);
    const centred = healthPass([bag], vecMap(fs), { ...params, centredCoherence: true });
    expect(centred.counts.reclustered).toBe(1);
    expect(centred.clusters.length).toBeGreaterThan(1);
    // every fact is still in exactly one cluster
    expect(centred.clusters.flatMap((c) => c.member_ids).sort()).toEqual(fs.map((f) => f.id).sort());
  });

  it('gives raw coherence in channels too small to centre', () => {
    const few = fs.slice(0, 5);
    const c = healthPass([{ ...bag, member_ids: few.map((f) => f.id) }], vecMap(few), {
      ...params,
      centredCoherence: true,
    });
    expect(c.counts.reclustered).toBe(0);
    expect(centredCoherences(c.clusters, vecMap(few))[0]).toBeCloseTo(c.clusters[0]!.coherence, 9);
  });
});

/** Clusters one day of #clojure (the first 200 messages over 20 characters) with `params`; figures to check. */
const clusterDay = async (enc: Embedder, params: ClusterParams) => {
  const day = JSON.parse(readFileSync(DAY, 'utf8')) as { type: string; subtype?: string; text?: string; ts: string }[];
  const msgs = day.filter((m) => m.type === 'message' && !m.subtype && (m.text ?? '').length > 20).slice(0, 200);
  const vectors = await enc.embed(msgs.map((m) => m.text as string));
  const fs = msgs.map((m, i) => ({ id: m.ts, channel_id: 'C03S1KBA2', vector: vectors[i]! }));
  const online = assignFacts([], fs, params);
  const { clusters } = healthPass(online.clusters, vecMap(fs), params);
  return { fs, clusters, s: clusterStats(clusters, fs.length), centred: centredCoherences(clusters, vecMap(fs)) };
};

describe('real data: #clojure 2018-02-04, e5-small-v2 (fetched once into the shared test model cache)', () => {
  it('meets the spec targets with E5_CLUSTER_PARAMS (centred coherence >= 0.4, >= 95% assigned)', async () => {
    const e5 = ONNX_MODELS['e5-small-v2'];
    const fetched = await fetchModel(e5, { dir: path.join(os.tmpdir(), 'atlas-test-models') });
    const enc = new OnnxEmbedder({ model: e5, files: fetched.files });
    let out: Awaited<ReturnType<typeof clusterDay>>;
    try {
      expect(enc.id).toBe(E5_EMBEDDER_ID);
      out = await clusterDay(enc, clusterParamsOf(enc.id));
    } finally {
      await enc.close();
    }
    const { fs, clusters, s, centred } = out;
    expect(s.assignedShare).toBeGreaterThanOrEqual(0.95);
    // raw coherence says nothing on e5's scale (a whole day of the channel is far above 0.4) ...
    expect(coherence(fs.map((f) => f.vector))).toBeGreaterThan(0.7);
    // ... the rule holds centred
    for (const c of centred) expect(c).toBeGreaterThanOrEqual(E5_CLUSTER_PARAMS.minCoherence - 1e-9);
    expect(s.clusters).toBeGreaterThan(3);
    expect(s.clusters).toBeLessThan(fs.length / 3);
    expect(Math.max(...clusters.map((c) => c.member_ids.length))).toBeLessThan(fs.length / 4);
    expect(s.topicShare).toBeGreaterThanOrEqual(0.85);
  }, 300_000);
});

describe('real data: #clojure 2018-02-04, local sentence encoder', () => {
  it('meets the spec targets with DEFAULT_CLUSTER_PARAMS (coherence above 0.4, >= 95% assigned)', async () => {
    const day = JSON.parse(readFileSync(DAY, 'utf8')) as {
      type: string;
      subtype?: string;
      text?: string;
      ts: string;
    }[];
    const msgs = day.filter((m) => m.type === 'message' && !m.subtype && (m.text ?? '').length > 20).slice(0, 200);
    expect(msgs.length).toBeGreaterThan(150);
    const enc = new LocalSentenceEncoder();
    let vectors: number[][];
    try {
      vectors = await enc.embed(msgs.map((m) => m.text as string));
    } finally {
      await enc.close();
    }
    const fs = msgs.map((m, i) => ({ id: m.ts, channel_id: 'C03S1KBA2', vector: vectors[i]! }));
    const online = assignFacts([], fs, DEFAULT_CLUSTER_PARAMS);
    const { clusters } = healthPass(online.clusters, vecMap(fs), DEFAULT_CLUSTER_PARAMS);
    const s = clusterStats(clusters, fs.length);
    expect(s.assignedShare).toBeGreaterThanOrEqual(0.95);
    expect(s.weightedCoherence).toBeGreaterThan(0.4);
    for (const c of clusters) expect(c.coherence).toBeGreaterThanOrEqual(DEFAULT_CLUSTER_PARAMS.minCoherence);
    // readable topics: more than a handful, fewer than one per few messages
    expect(s.clusters).toBeGreaterThan(3);
    expect(s.clusters).toBeLessThan(fs.length / 3);
    // no blob absorbing the day (raw cosine at 0.6 gives one of 100 here) and few one-fact topics
    expect(Math.max(...clusters.map((c) => c.member_ids.length))).toBeLessThan(fs.length / 4);
    expect(s.topicShare).toBeGreaterThanOrEqual(0.9);
    // The model's load and 200 embeddings take a few seconds alone, minutes on a busy machine.
  }, 180_000);
});

describe('authorCentred', () => {
  const unit = (v: number[]) => {
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  };
  const cos = (a: readonly number[], b: readonly number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);
  // Author A writes in one "voice" (the x axis) about two topics (y and z); B writes about topic y.
  const vectors = new Map<string, number[]>([
    ['a1', unit([1, 0.3, 0])],
    ['a2', unit([1, 0, 0.3])],
    ['a3', unit([1, 0.1, 0.1])],
    ['b1', unit([0.2, 1, 0])],
  ]);
  const authorOf = new Map([
    ['a1', 'A'],
    ['a2', 'A'],
    ['a3', 'A'],
    ['b1', 'B'],
  ]);

  it("moves a prolific author's facts apart and towards others' facts on their topic; unit length", () => {
    const out = authorCentred(['a1', 'a2', 'b1'], vectors, authorOf);
    expect(cos(out.get('a1')!, out.get('a2')!)).toBeLessThan(cos(vectors.get('a1')!, vectors.get('a2')!) - 0.1);
    expect(cos(out.get('a1')!, out.get('b1')!)).toBeGreaterThan(cos(vectors.get('a1')!, vectors.get('b1')!));
    for (const v of out.values()) expect(Math.hypot(...v)).toBeCloseTo(1, 9);
    // B has one fact (< minFacts): unchanged; ids not asked for are not returned.
    expect(out.get('b1')).toEqual(vectors.get('b1'));
    expect(out.has('a3')).toBe(false);
  });

  it('leaves vectors as they are with beta 0, and skips ids without a vector', () => {
    const out = authorCentred(['a1', 'nope'], vectors, authorOf, { beta: 0, minFacts: 3 });
    expect(out.get('a1')).toEqual(vectors.get('a1'));
    expect(out.has('nope')).toBe(false);
  });
});
