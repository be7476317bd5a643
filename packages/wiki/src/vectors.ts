// Vector helpers of the clustering (unit vectors as number[]): similarities, centroids, accumulators, ids.
import { deterministicId } from '@atlas/core';
import type { TopicCluster } from './types.js';

/**
 * cosine(a - m, b - m) (plain cosine without m): the similarity behind every decision. 0 when either side is 0.
 */
export const sim = (a: readonly number[], b: readonly number[], m?: readonly number[]): number => {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]! - (m ? m[i]! : 0);
    const y = b[i]! - (m ? m[i]! : 0);
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return aa === 0 || bb === 0 ? 0 : ab / Math.sqrt(aa * bb);
};

/**
 * sim(v, mean of a's members, m) for many (v, a) pairs around one mean `m`, without allocating per pair: each vector's centred
 * form and squared norm are computed once (for the last v seen), and each cluster's centred mean once until the
 * cluster changes (addTo replaces acc.cluster, which keys the cache). The same operations in the same order as sim,
 * so bitwise the same value.
 */
const centredSim = (m: readonly number[]): ((v: readonly number[], a: Acc) => number) => {
  const means = new Map<TopicCluster, { y: number[]; bb: number }>();
  let last: readonly number[] | null = null;
  let x: number[] = [];
  let aa = 0;
  return (v, a) => {
    if (v !== last) {
      last = v;
      x = new Array<number>(v.length);
      aa = 0;
      for (let i = 0; i < v.length; i++) {
        const xi = v[i]! - m[i]!;
        x[i] = xi;
        aa += xi * xi;
      }
    }
    let c = means.get(a.cluster);
    if (!c) {
      const n = a.cluster.member_ids.length;
      const y = new Array<number>(a.sum.length);
      let bb = 0;
      for (let i = 0; i < a.sum.length; i++) {
        const yi = a.sum[i]! / n - m[i]!;
        y[i] = yi;
        bb += yi * yi;
      }
      c = { y, bb };
      means.set(a.cluster, c);
    }
    let ab = 0;
    for (let i = 0; i < x.length; i++) ab += x[i]! * c.y[i]!;
    return aa === 0 || c.bb === 0 ? 0 : ab / Math.sqrt(aa * c.bb);
  };
};

/** centredSim per channel mean, made on first use. */
export const centredSims = (means: ReadonlyMap<string, number[]> | undefined) => {
  const sims = new Map<string, (v: readonly number[], a: Acc) => number>();
  return (channelId: string): ((v: readonly number[], a: Acc) => number) | undefined => {
    const m = means?.get(channelId);
    if (!m) return undefined;
    let f = sims.get(channelId);
    if (!f) {
      f = centredSim(m);
      sims.set(channelId, f);
    }
    return f;
  };
};

/** Mean of a cluster's unit member vectors (not unit length): centroid * coherence. */
export const meanOf = (c: TopicCluster): number[] => c.centroid.map((x) => x * c.coherence);

/**
 * Channels with fewer facts are not centred: the mean of a handful of vectors is mostly the vectors themselves
 * (two facts on one subject would end up pointing opposite ways).
 */
const CENTER_MIN_FACTS = 20;

/** Per channel, the mean of its unit fact vectors (sums of clusters plus loose vectors), when centring. */
export const channelMeans = (
  sums: readonly { channel_id: string; sum: readonly number[]; n: number }[],
): Map<string, number[]> => {
  const acc = new Map<string, { sum: number[]; n: number }>();
  for (const x of sums) {
    const a = acc.get(x.channel_id) ?? { sum: new Array<number>(x.sum.length).fill(0), n: 0 };
    for (let i = 0; i < x.sum.length; i++) a.sum[i] = a.sum[i]! + x.sum[i]!;
    a.n += x.n;
    acc.set(x.channel_id, a);
  }
  return new Map([...acc].filter(([, a]) => a.n >= CENTER_MIN_FACTS).map(([ch, a]) => [ch, a.sum.map((v) => v / a.n)]));
};

export const dot = (a: readonly number[], b: readonly number[]): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};

export const norm = (a: readonly number[]): number => Math.sqrt(dot(a, a));

export const unit = (a: readonly number[]): number[] => {
  const n = norm(a);
  return n === 0 ? a.map(() => 0) : a.map((x) => x / n);
};

/** Cosine similarity of two vectors of the same length, in [-1, 1] (0 when either is the zero vector). */
export const cosine = (a: readonly number[], b: readonly number[]): number => {
  const n = norm(a) * norm(b);
  return n === 0 ? 0 : dot(a, b) / n;
};

/** Running sum of a cluster's unit member vectors (see the module note: sum = centroid * coherence * n). */
export interface Acc {
  cluster: TopicCluster;
  sum: number[];
}

export const accOf = (c: TopicCluster): Acc => ({
  cluster: c,
  sum: c.centroid.map((x) => x * c.coherence * c.member_ids.length),
});

export const addTo = (acc: Acc, id: string, v: readonly number[]): void => {
  for (let i = 0; i < v.length; i++) acc.sum[i] = acc.sum[i]! + v[i]!;
  const n = acc.cluster.member_ids.length + 1;
  const len = norm(acc.sum);
  acc.cluster = {
    ...acc.cluster,
    member_ids: [...acc.cluster.member_ids, id],
    centroid: len === 0 ? acc.sum.slice() : acc.sum.map((x) => x / len),
    coherence: len / n,
  };
};

/** Coherence a cluster would have after taking `v` (without changing it). */
export const coherenceWith = (acc: Acc, v: readonly number[]): number => {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += (acc.sum[i]! + v[i]!) ** 2;
  return Math.sqrt(s) / (acc.cluster.member_ids.length + 1);
};

/**
 * Coherence of a set of vectors: the mean cosine of each vector to their unit-length mean, in [0, 1]
 * (1 for one vector or identical ones; 0 for none). Spec: clusters below 0.4 are re-clustered.
 */
export function coherence(vectors: readonly (readonly number[])[]): number {
  return centroidOf(vectors.map(unit)).coherence;
}

/** Centroid (unit-length mean) and coherence of unit vectors. */
export const centroidOf = (units: readonly (readonly number[])[]): { centroid: number[]; coherence: number } => {
  if (units.length === 0) return { centroid: [], coherence: 0 };
  const sum = new Array<number>(units[0]!.length).fill(0);
  for (const v of units) for (let i = 0; i < v.length; i++) sum[i] = sum[i]! + v[i]!;
  const len = norm(sum);
  return { centroid: len === 0 ? sum : sum.map((x) => x / len), coherence: len / units.length };
};

/** A cluster rebuilt exactly from its members' vectors. */
export const rebuild = (
  c: TopicCluster,
  members: readonly string[],
  vecs: ReadonlyMap<string, number[]>,
): TopicCluster => {
  const { centroid, coherence } = centroidOf(members.map((m) => vecs.get(m) as number[]));
  return { ...c, member_ids: [...members], centroid, coherence };
};

/** A cluster id not in `taken`: deterministicId('cluster', channel, ...parts), disambiguated on a clash. */
export const freshId = (taken: ReadonlySet<string>, channelId: string, ...parts: string[]): string => {
  let id = deterministicId('cluster', channelId, ...parts);
  for (let i = 2; taken.has(id); i++) id = deterministicId('cluster', channelId, ...parts, String(i));
  return id;
};
