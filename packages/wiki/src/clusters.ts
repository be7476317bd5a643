/**
 * Topic clustering over fact embeddings (spec "Wiki generation (behaviour)": incremental assignment after each
 * channel sync, and the cluster health rules of the daily rebuild). Pure functions: no store, no clock, no
 * randomness other than the seeded k-means, so the same input gives the same clusters and the same ids.
 *
 * Vectors are any-length embeddings (the local Universal Sentence Encoder lite gives 512-d); they are normalised
 * to unit length on entry, so cosine is a dot product. A cluster's centroid is the unit-length mean of its members'
 * unit vectors and its coherence the mean cosine of the members to that centroid. For unit vectors the two are
 * tied: with `s` the sum of the n member vectors, centroid = s / |s| and coherence = |s| / n, so the sum is
 * `centroid * coherence * n` and a cluster can take a new member exactly, without its members' vectors.
 *
 * With `center` (the default) every similarity decision is made on vectors minus their channel's mean (see
 * `ClusterParams.center`); "cosine" in the docs below then means that centred cosine. Stored centroids and
 * coherence are always the raw ones the types describe.


/** Thresholds of the clustering; cosines are in [-1, 1], sizes in facts. */
import { kmeans } from 'ml-kmeans';
import type { TopicCluster } from './types.js';
import {
  type Acc,
  accOf,
  addTo,
  centredSims,
  centroidOf,
  channelMeans,
  coherenceWith,
  dot,
  freshId,
  meanOf,
  rebuild,
  sim,
  unit,
} from './vectors.js';

export interface ClusterParams {
  /** A new fact joins the nearest cluster of its channel when cosine(fact, centroid) >= this; else it seeds one. */
  assignThreshold: number;
  /** Clusters with more members than this are split with k-means (spec: 100). */
  maxSize: number;
  /** Two clusters of a channel whose centroids have cosine above this are merged (spec: 0.85). */
  mergeThreshold: number;
  /** Clusters with coherence below this are re-clustered (spec: 0.4). */
  minCoherence: number;
  /** Clusters with fewer members than this are "tiny": the health pass folds their members into bigger clusters. */
  minSize: number;
  /** A member of a tiny cluster moves into the nearest cluster of size >= minSize when its cosine is >= this. */
  foldThreshold: number;
  /** Seed of the k-means initialisation (k-means++), for deterministic splits. */
  seed: number;
  /**
   * Compare in channel-centred space: every similarity decision (assign, split, merge, fold) uses
   * cosine(a - m, b - m), m the mean of the channel's unit fact vectors. Stored centroids and coherence stay raw.
   * Sentence encoders put all of a channel's vectors in a narrow cone (the local encoder: a whole channel has
   * coherence ~0.69), where a big cluster's centroid drifts to the cone's axis and absorbs everything; centring
   * removes the shared direction. Thresholds differ a lot between the two modes (see DEFAULT_CLUSTER_PARAMS).
   */
  center: boolean;
  /**
   * Read the `minCoherence` rule (merge guard, re-cluster, fold guard) on channel-centred vectors: a cluster's
   * coherence is then the mean cosine of its members' centred unit vectors (unit(v - m)) to their unit mean. Only
   * with `center` and in channels that are centred (>= 20 facts); stored centroids and coherence stay raw. For an
   * encoder whose raw cosines are all high (e5-small-v2: a whole channel has raw coherence ~0.8), the raw 0.4 rule can
   * never fire; centred, it still tells a topic from a bag of unrelated facts (see E5_CLUSTER_PARAMS).
   */
  centredCoherence: boolean;
}

/**
 * Defaults, tuned on real data: the slack-clojurians-2018-02 export imported into an in-memory runtime (3,637 fact
 * vectors from 3,108 messages, 77 channels), vectors from the local Universal Sentence Encoder lite (512-d), each
 * channel clustered by `assignFacts` (export order) then one `healthPass`; maxSize 100, mergeThreshold 0.85,
 * minCoherence 0.4, minSize 3 held at the spec values. Per assign / fold threshold, for the 5 busiest channels
 * (532, 342, 252, 237, 222 facts) "clusters/singletons, size-weighted coherence, topic share (facts in clusters
 * of >= 3), median size, largest", then all 77 channels "clusters/singletons, weighted and lowest coherence,
 * assigned share, topic share, median size". Coherence is always the raw one (as stored).
 *
 * Channel-centred (`center: true`, the default; channels under 20 facts are not centred):
 *
 * | assign / fold  | #1 (532)             | #2 (342)           | #3 (252)          | #4 (237)          | #5 (222)          | all 77 channels          |
 * |----------------|----------------------|--------------------|-------------------|-------------------|-------------------|--------------------------|
 * | 0.1 / 0.05     | 14/0 .75 1.00 39.5 76| 11/0 .73 1.00 33 58| 9/0 .75 1.00 23 49| 12/0 .71 1.00 17 48| 9/0 .78 1.00 24 38| 279/14 .77 .60 1.00 .99 9|
 * | 0.15 / 0.1     | 19/0 .76 1.00 27 77  | 19/0 .76 1.00 15 52| 14/0 .76 1.00 16 44| 15/0 .72 1.00 13 36| 14/0 .80 1.00 15 37| 356/22 .78 .60 1.00 .99 7|
 * | **0.2 / 0.1**  | 30/0 .78 1.00 14.5 44| 26/0 .77 1.00 10 40| 21/0 .78 1.00 9 45| 19/0 .75 1.00 9 33| 23/0 .82 1.00 7 25| 426/25 .80 .62 1.00 .98 6|
 * | 0.25 / 0.15    | 43/0 .80 1.00 12 43  | 29/2 .78 .99 9 36  | 28/1 .80 1.00 8 35| 27/0 .78 1.00 7 30| 23/1 .83 1.00 8 22| 536/76 .81 .62 1.00 .96 5|
 * | 0.3 / 0.2      | 60/3 .81 .99 7 36    | 35/4 .79 .98 8 31  | 36/2 .82 .99 6 29 | 32/2 .79 .99 6 30 | 35/2 .85 .98 5 17 | 695/174 .82 .60 1.00 .91 4|
 *
 * Raw cosine (`center: false`):
 *
 * | assign / fold | #1 (532)            | #2 (342)            | #3 (252)            | #4 (237)            | #5 (222)            | all 77 channels          |
 * |---------------|---------------------|---------------------|---------------------|---------------------|---------------------|--------------------------|
 * | 0.5 / 0.4     | 12/0 .74 1.00 36 97 | 12/2 .74 .99 18 88  | 9/1 .74 1.00 7 87   | 13/1 .72 1.00 8 77  | 6/0 .77 1.00 26 95  | 194/49 .74 .64 1.00 .98 6|
 * | 0.55 / 0.45   | 21/7 .75 .99 7 90   | 19/3 .75 .99 7 91   | 12/5 .74 .98 5.5 99 | 22/8 .74 .96 3 100  | 13/8 .78 .96 1 95   | 263/102 .75 .66 1.00 .97 3|
 * | 0.6 / 0.45    | 25/7 .76 .99 7 100  | 23/9 .75 .97 4 100  | 13/6 .75 .98 4 100  | 19/6 .73 .97 5 89   | 10/6 .77 .97 1 100  | 289/118 .76 .66 1.00 .96 4|
 * | 0.6 / 0.5     | 33/14 .77 .97 3 100 | 31/16 .76 .94 1 100 | 20/11 .76 .94 1 100 | 28/14 .74 .93 1.5 90| 17/13 .78 .94 1 99  | 377/196 .77 .68 1.00 .93 1|
 * | 0.65 / 0.5    | 37/17 .77 .96 3 100 | 38/15 .78 .94 4 100 | 23/15 .75 .93 1 98  | 33/19 .74 .89 1 93  | 17/12 .78 .94 1 100 | 421/224 .77 .64 1.00 .92 1|
 * | 0.7 / 0.6     | 87/62 .79 .86 1 100 | 69/50 .79 .84 1 99  | 57/47 .79 .79 1 100 | 84/61 .82 .66 1 40  | 35/31 .79 .85 1 100 | 870/625 .80 .72 1.00 .78 1|
 *
 * Why centred: this encoder puts a channel's vectors in a narrow cone (a whole channel has coherence ~0.69, median
 * pairwise cosine 0.48). With raw cosine the spec's 0.4 coherence rule never fires and online assignment grows one
 * cluster that absorbs most facts (371 of 532 at 0.6) until the daily pass cuts it into k-means parts of ~55-100:
 * see the largest sizes of ~100 above. Centred, no cluster passes 77 facts, the busiest channels get 19-30 topics
 * with no one-fact topic, and 98% of all facts sit in clusters of >= 3. Chosen: centred, assign 0.2, fold 0.1.
 * The 0.4 coherence rule still never fires on this data (lowest cluster: 0.62); it guards other models.
 */
export const DEFAULT_CLUSTER_PARAMS: Readonly<ClusterParams> = Object.freeze({
  assignThreshold: 0.2,
  maxSize: 100,
  mergeThreshold: 0.85,
  minCoherence: 0.4,
  minSize: 3,
  foldThreshold: 0.1,
  seed: 42,
  center: true,
  centredCoherence: false,
});

/** A fact to cluster: its id, its channel and its embedding. */
export interface FactVector {
  id: string;
  channel_id: string;
  vector: readonly number[];
}

/** What `assignFacts` returns. */
export interface AssignResult {
  /** All clusters (the untouched ones as given, the touched ones as new objects). */
  clusters: TopicCluster[];
  /** Ids of the clusters created or changed, in order of first touch. */
  touched: string[];
}

/** Counts of the actions of one health pass. */
export interface HealthCounts {
  /** Members dropped because `vectors` had no vector for them (the fact is gone). */
  dropped: number;
  /** Clusters deleted because they had 0 members. */
  deleted: number;
  /** Oversized clusters split (each counted once however many parts it gave). */
  split: number;
  /** Merges done (a merge folds one cluster into another). */
  merged: number;
  /** Incoherent clusters dissolved and re-clustered. */
  reclustered: number;
  /** Members of tiny clusters moved into a bigger cluster. */
  folded: number;
}

/** What `healthPass` returns. */
export interface HealthResult {
  clusters: TopicCluster[];
  counts: HealthCounts;
}

/** Figures of a clustering (what the tuning table reports). */
export interface ClusterStats {
  /** Number of clusters. */
  clusters: number;
  /** Mean of the clusters' coherence, each cluster weighing the same (singletons count as 1). */
  meanCoherence: number;
  /** Mean coherence of clusters with >= 2 members, weighted by size (the mean cosine of such a fact to its centroid). */
  weightedCoherence: number;
  /** Lowest coherence of a cluster. */
  minCoherence: number;
  /** Share of the facts that are a member of some cluster, singletons included (spec target: >= 0.95). */
  assignedShare: number;
  /** Share of the facts in a cluster of >= `minSize` members (a topic page rather than a one-fact topic). */
  topicShare: number;
  /** Median number of members of a cluster. */
  medianSize: number;
  /** Clusters of one member. */
  singletons: number;
}

/**
 * Online assignment (spec trigger 1, after each channel sync): each fact, in the order given, joins the nearest
 * cluster of its channel when cosine(vector, cluster mean) >= `params.assignThreshold` (centred on the mean of the
 * channel's clustered facts plus this batch when `params.center`), else seeds a new cluster
 * with id `deterministicId('cluster', channel_id, fact id)`. The joined cluster's centroid and coherence are
 * updated exactly (incremental unit-length mean). A fact already a member of a cluster is skipped, so
 * re-assigning a batch is a no-op. Input clusters are not mutated; their order is kept, new ones come last.
 * Returns all clusters and the ids of those created or changed.
 */
export function assignFacts(
  clusters: readonly TopicCluster[],
  facts: readonly FactVector[],
  params: Pick<ClusterParams, 'assignThreshold'> & Partial<Pick<ClusterParams, 'center'>> = DEFAULT_CLUSTER_PARAMS,
): AssignResult {
  const accs: Acc[] = clusters.map(accOf);
  const members = new Set<string>();
  for (const c of clusters) for (const m of c.member_ids) members.add(m);
  const taken = new Set(clusters.map((c) => c.id));
  const touched: string[] = [];
  const touch = (id: string) => {
    if (!touched.includes(id)) touched.push(id);
  };
  const fresh: (FactVector & { vector: number[] })[] = [];
  for (const f of facts) {
    if (members.has(f.id)) continue;
    members.add(f.id);
    fresh.push({ id: f.id, channel_id: f.channel_id, vector: unit(f.vector) });
  }
  const means = params.center
    ? channelMeans([
        ...accs.map((a) => ({ channel_id: a.cluster.channel_id, sum: a.sum, n: a.cluster.member_ids.length })),
        ...fresh.map((f) => ({ channel_id: f.channel_id, sum: f.vector, n: 1 })),
      ])
    : undefined;
  const simOf = centredSims(means);
  for (const f of fresh) {
    const v = f.vector;
    const simTo = simOf(f.channel_id);
    let best: Acc | undefined;
    let bestCos = Number.NEGATIVE_INFINITY;
    for (const a of accs) {
      if (a.cluster.channel_id !== f.channel_id || a.cluster.member_ids.length === 0) continue;
      const c = simTo ? simTo(v, a) : dot(v, a.cluster.centroid);
      if (c > bestCos) {
        bestCos = c;
        best = a;
      }
    }
    if (best && bestCos >= params.assignThreshold) {
      addTo(best, f.id, v);
      touch(best.cluster.id);
    } else {
      const id = freshId(taken, f.channel_id, f.id);
      taken.add(id);
      accs.push({
        cluster: { id, channel_id: f.channel_id, centroid: v, member_ids: [f.id], coherence: 1, parent_id: null },
        sum: v.slice(),
      });
      touch(id);
    }
  }
  return { clusters: accs.map((a) => a.cluster), touched };
}

/** Seeded k-means over unit vectors (squared Euclidean on unit vectors ranks like cosine); returns the groups. */
const kmeansGroups = (
  ids: readonly string[],
  vecs: ReadonlyMap<string, number[]>,
  k: number,
  seed: number,
  mean: readonly number[] | undefined,
) => {
  const data = ids.map((id) => {
    const v = vecs.get(id) as number[];
    return mean ? unit(v.map((x, i) => x - mean[i]!)) : v;
  });
  const res = kmeans(data, k, { seed, initialization: 'kmeans++', maxIterations: 100 });
  const groups: string[][] = Array.from({ length: k }, () => []);
  res.clusters.forEach((g, i) => {
    groups[g]!.push(ids[i]!);
  });
  return groups.filter((g) => g.length > 0);
};

/**
 * Splits one oversized cluster into parts of at most `maxSize` members: k-means with k = ceil(size / maxSize),
 * parts still oversized split again. Every part gets `parent_id` = the split cluster's id and an id
 * `deterministicId('cluster', channel, 'split', parent id, first member)`.
 */
const splitCluster = (
  c: TopicCluster,
  vecs: ReadonlyMap<string, number[]>,
  params: ClusterParams,
  taken: Set<string>,
  mean: readonly number[] | undefined,
): TopicCluster[] => {
  const out: TopicCluster[] = [];
  const queue: string[][] = [c.member_ids.slice()];
  while (queue.length > 0) {
    const ids = queue.shift() as string[];
    if (ids.length <= params.maxSize) {
      const id = freshId(taken, c.channel_id, 'split', c.id, ids[0]!);
      taken.add(id);
      out.push(rebuild({ ...c, id, parent_id: c.id }, ids, vecs));
      continue;
    }
    let groups = kmeansGroups(ids, vecs, Math.ceil(ids.length / params.maxSize), params.seed, mean);
    // k-means can leave everything in one group (e.g. identical vectors): cut the list into k even parts instead.
    if (groups.length < 2) {
      const k = Math.ceil(ids.length / params.maxSize);
      groups = Array.from({ length: k }, (_, i) =>
        ids.slice(Math.floor((i * ids.length) / k), Math.floor(((i + 1) * ids.length) / k)),
      );
    }
    queue.push(...groups);
  }
  return out;
};

/**
 * The daily health pass over clusters (spec trigger 2, "Cluster health rules"), per channel, in this order:
 * 1. members with no vector in `vectors` are dropped, then clusters with 0 members are deleted;
 * 2. clusters with more than `maxSize` members (spec: 100) are split with seeded k-means (on centred vectors
 *    when `center`), k = ceil(size / maxSize),
 *    the parts getting `parent_id` = the split cluster's id (sub-topics);
 * 3. pairs whose centroids have cosine above `mergeThreshold` (spec: 0.85) are merged, most similar pair first, the
 *    bigger cluster keeping its id; a merge that would exceed `maxSize` or drop below `minCoherence` is not done
 *    (so tomorrow's pass does not split it again);
 * 4. clusters with coherence below `minCoherence` (spec: 0.4) are dissolved and their members re-assigned online
 *    (`assignFacts` with `assignThreshold`) to the remaining clusters or to new ones they seed;
 * 5. members of tiny clusters (fewer than `minSize`) move to the nearest cluster of >= `minSize` members when their
 *    cosine to its centroid is >= `foldThreshold` and its coherence stays >= `minCoherence`; emptied ones go;
 * 6. centroids and coherence are recomputed exactly from the vectors.
 * `vectors` maps fact id to embedding and must hold every live fact of the clusters. Deterministic: same input,
 * same output (clusters sorted by channel, then size descending, then id).
 */
export function healthPass(
  clusters: readonly TopicCluster[],
  vectors: ReadonlyMap<string, readonly number[]>,
  params: ClusterParams = DEFAULT_CLUSTER_PARAMS,
): HealthResult {
  const counts: HealthCounts = { dropped: 0, deleted: 0, split: 0, merged: 0, reclustered: 0, folded: 0 };
  const vecs = new Map<string, number[]>();
  for (const [id, v] of vectors) vecs.set(id, unit(v));
  const taken = new Set(clusters.map((c) => c.id));

  // 1. drop members without vectors (and duplicates), delete empty clusters
  const seen = new Set<string>();
  let cs: TopicCluster[] = [];
  for (const c of [...clusters].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    const keep = c.member_ids.filter((m) => vecs.has(m) && !seen.has(m));
    counts.dropped += c.member_ids.filter((m) => !vecs.has(m)).length;
    for (const m of keep) seen.add(m);
    if (keep.length === 0) {
      counts.deleted++;
      continue;
    }
    cs.push(rebuild(c, keep, vecs));
  }

  const means = params.center
    ? channelMeans(
        cs.map((c) => ({
          channel_id: c.channel_id,
          sum: meanOf(c).map((x) => x * c.member_ids.length),
          n: c.member_ids.length,
        })),
      )
    : undefined;

  // The coherence the minCoherence rule reads: raw, or of the members' channel-centred vectors (centredCoherence).
  const centredUnits = new Map<string, number[]>();
  const centredOf = (channelId: string, id: string): number[] | undefined => {
    const m = params.centredCoherence ? means?.get(channelId) : undefined;
    if (!m) return undefined;
    let u = centredUnits.get(id);
    if (!u) {
      u = unit((vecs.get(id) as number[]).map((x, i) => x - m[i]!));
      centredUnits.set(id, u);
    }
    return u;
  };
  const ruleCoherence = (channelId: string, ids: readonly string[], raw: () => number): number => {
    if (!params.centredCoherence || !means?.has(channelId)) return raw();
    return centroidOf(ids.map((id) => centredOf(channelId, id) as number[])).coherence;
  };

  // 2. split oversized clusters
  const afterSplit: TopicCluster[] = [];
  for (const c of cs) {
    if (c.member_ids.length > params.maxSize) {
      counts.split++;
      afterSplit.push(...splitCluster(c, vecs, params, taken, means?.get(c.channel_id)));
    } else afterSplit.push(c);
  }
  cs = afterSplit;

  // 3. merge near-duplicates, most similar pair first
  for (;;) {
    let best: [number, number] | undefined;
    let bestCos = params.mergeThreshold;
    for (let i = 0; i < cs.length; i++) {
      const x = cs[i]!;
      for (let j = i + 1; j < cs.length; j++) {
        const y = cs[j]!;
        if (x.channel_id !== y.channel_id) continue;
        if (x.member_ids.length + y.member_ids.length > params.maxSize) continue;
        const c = sim(meanOf(x), meanOf(y), means?.get(x.channel_id));
        if (c > bestCos) {
          const ids = [...x.member_ids, ...y.member_ids];
          const merged = ruleCoherence(
            x.channel_id,
            ids,
            () => centroidOf(ids.map((m) => vecs.get(m) as number[])).coherence,
          );
          if (merged < params.minCoherence) continue;
          bestCos = c;
          best = [i, j];
        }
      }
    }
    if (!best) break;
    const [a, b] = best;
    const [x, y] = [cs[a]!, cs[b]!];
    const [keep, gone] = x.member_ids.length >= y.member_ids.length ? [x, y] : [y, x];
    const merged = rebuild(keep, [...keep.member_ids, ...gone.member_ids], vecs);
    cs = cs.filter((_, i) => i !== a && i !== b);
    cs.push(merged);
    counts.merged++;
  }

  // 4. re-cluster incoherent clusters
  const coherent = (c: TopicCluster) =>
    ruleCoherence(c.channel_id, c.member_ids, () => c.coherence) >= params.minCoherence;
  const incoherent = cs.filter((c) => !coherent(c));
  if (incoherent.length > 0) {
    counts.reclustered = incoherent.length;
    const rest = cs.filter(coherent);
    const facts: FactVector[] = incoherent.flatMap((c) =>
      c.member_ids.map((m) => ({ id: m, channel_id: c.channel_id, vector: vecs.get(m) as number[] })),
    );
    for (const c of incoherent) taken.delete(c.id); // a seed may take its old cluster's id again
    cs = assignFacts(rest, facts, params).clusters;
    for (const c of cs) taken.add(c.id);
  }

  // 5. fold members of tiny clusters into the nearest cluster of >= minSize members
  const accs = cs.map(accOf);
  const tiny = accs
    .filter((a) => a.cluster.member_ids.length < params.minSize)
    .sort(
      (x, y) => x.cluster.member_ids.length - y.cluster.member_ids.length || (x.cluster.id < y.cluster.id ? -1 : 1),
    );
  const targets = accs.filter((a) => a.cluster.member_ids.length >= params.minSize);
  const simOf = centredSims(means);
  // Centred member sums of the targets (centredCoherence): the fold guard's coherence after taking a vector.
  const centredSums = new Map<Acc, number[]>();
  const coherenceAfter = (a: Acc, v: readonly number[], id: string): number => {
    const cv = centredOf(a.cluster.channel_id, id);
    if (!cv) return coherenceWith(a, v);
    let sum = centredSums.get(a);
    if (!sum) {
      sum = new Array<number>(cv.length).fill(0);
      for (const m of a.cluster.member_ids) {
        const u = centredOf(a.cluster.channel_id, m) as number[];
        for (let i = 0; i < u.length; i++) sum[i] = sum[i]! + u[i]!;
      }
      centredSums.set(a, sum);
    }
    let s = 0;
    for (let i = 0; i < cv.length; i++) s += (sum[i]! + cv[i]!) ** 2;
    return Math.sqrt(s) / (a.cluster.member_ids.length + 1);
  };
  for (const t of tiny) {
    const stay: string[] = [];
    for (const m of t.cluster.member_ids) {
      const v = vecs.get(m) as number[];
      const simTo = simOf(t.cluster.channel_id);
      let best: Acc | undefined;
      let bestCos = params.foldThreshold;
      for (const a of targets) {
        if (a.cluster.channel_id !== t.cluster.channel_id || a.cluster.member_ids.length >= params.maxSize) continue;
        const c = simTo ? simTo(v, a) : dot(v, a.cluster.centroid);
        if (c >= bestCos && coherenceAfter(a, v, m) >= params.minCoherence) {
          bestCos = c;
          best = a;
        }
      }
      if (best) {
        const sum = centredSums.get(best);
        const cv = centredOf(best.cluster.channel_id, m);
        if (sum && cv) for (let i = 0; i < cv.length; i++) sum[i] = sum[i]! + cv[i]!;
        addTo(best, m, v);
        counts.folded++;
      } else stay.push(m);
    }
    t.cluster = { ...t.cluster, member_ids: stay };
  }

  // 6. recompute exactly, drop emptied clusters, sort
  const out = accs
    .map((a) => a.cluster)
    .filter((c) => c.member_ids.length > 0)
    .map((c) => rebuild(c, c.member_ids, vecs))
    .sort(
      (a, b) =>
        (a.channel_id < b.channel_id ? -1 : a.channel_id > b.channel_id ? 1 : 0) ||
        b.member_ids.length - a.member_ids.length ||
        (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    );
  return { clusters: out, counts };
}

/**
 * Figures of a clustering against the number of facts it should cover (`factCount`, the channel's or the
 * workspace's live facts): cluster count, coherence (mean per cluster, size-weighted over clusters of >= 2, lowest),
 * share of facts assigned (spec target >= 0.95; singletons count as assigned), share in clusters of >= `minSize`,
 * median cluster size, singleton count.
 */
export function clusterStats(
  clusters: readonly TopicCluster[],
  factCount: number,
  minSize: number = DEFAULT_CLUSTER_PARAMS.minSize,
): ClusterStats {
  const sizes = clusters.map((c) => c.member_ids.length).sort((a, b) => a - b);
  const assigned = new Set(clusters.flatMap((c) => c.member_ids)).size;
  const multi = clusters.filter((c) => c.member_ids.length >= 2);
  const multiFacts = multi.reduce((s, c) => s + c.member_ids.length, 0);
  const mid = sizes.length / 2;
  return {
    clusters: clusters.length,
    meanCoherence: clusters.length ? clusters.reduce((s, c) => s + c.coherence, 0) / clusters.length : 0,
    weightedCoherence: multiFacts ? multi.reduce((s, c) => s + c.coherence * c.member_ids.length, 0) / multiFacts : 0,
    minCoherence: clusters.length ? Math.min(...clusters.map((c) => c.coherence)) : 0,
    assignedShare: factCount > 0 ? Math.min(1, assigned / factCount) : 1,
    topicShare:
      factCount > 0
        ? clusters.filter((c) => c.member_ids.length >= minSize).reduce((s, c) => s + c.member_ids.length, 0) /
          factCount
        : 1,
    medianSize:
      sizes.length === 0 ? 0 : sizes.length % 2 ? sizes[Math.floor(mid)]! : (sizes[mid - 1]! + sizes[mid]!) / 2,
    singletons: sizes.filter((s) => s === 1).length,
  };
}

/** Embedder id of the Universal Sentence Encoder lite (the fallback local encoder). */
export const USE_LITE_EMBEDDER_ID = 'use-lite-512@energetic-ai-0.2.0';
/** Embedder id of e5-small-v2 int8 ONNX (the default local encoder). */
export const E5_EMBEDDER_ID = 'onnx:e5-small-v2-q';

/**
 * Thresholds for e5-small-v2 int8 (E5_EMBEDDER_ID), measured on the real exports (slack-clojurians-2018-02,
 * slack-olake, discord-ethglobal imported into one in-memory runtime: 86 channels; vectors author-centred with
 * E5_AUTHOR_CENTRING, each channel clustered by `assignFacts` in time order then one `healthPass`, as a full
 * generation does). e5's raw cosines are all high: a busy channel's whole fact set has raw coherence 0.90-0.91 and a
 * median pairwise cosine of 0.81-0.83 (USE-lite: ~0.69 and 0.48). Every decision already runs in channel-centred
 * space (`center`), where the cone's shared direction is gone, so the USE-lite thresholds carry over:
 *
 * | assign / fold, beta | clusters | singletons | topic share | raw coh. (lowest) | centred coh. (lowest) | top-author share |
 * |---------------------|----------|------------|-------------|-------------------|-----------------------|------------------|
 * | 0.15 / 0.1, 0.5     | 516      | 41         | 0.97        | 0.85 (0.76)       | 0.55 (0.38)           |                  |
 * | **0.2 / 0.1, 0.5**  | 601      | 76         | 0.95        | 0.86 (0.76)       | 0.57 (0.40)           | 0.39             |
 * | 0.25 / 0.15, 0.5    | 859      | 269        | 0.87        | 0.86 (0.77)       | 0.60 (0.40)           |                  |
 * | 0.3 / 0.15, 0.5     | 943      | 397        | 0.82        | 0.86 (0.76)       | 0.58 (0.40)           |                  |
 * | 0.2 / 0.1, 0 (none) | 567      | 42         | 0.97        | 0.94 (0.91)       | 0.60 (0.40)           | 0.53             |
 * | 0.2 / 0.1, 0.7      | 603      | 96         | 0.94        | 0.76 (0.62)       | 0.56 (0.41)           | 0.37             |
 *
 * (topic share: facts in clusters of >= 3; coherence size-weighted over those clusters; top-author share: the
 * size-weighted share of a cluster's commonest author.) Chosen: assign 0.2, fold 0.1 as for USE-lite: 95% of facts
 * in topics, the busiest channels get 24-43 topics; lower thresholds grow clusters of 60-84 facts, higher ones leave
 * 13-18% of facts in one- and two-fact clusters.
 Same data, USE-lite with DEFAULT_CLUSTER_PARAMS: 537 clusters, 45 singletons, topic share 0.97, raw coherence
 * 0.69 (0.40), centred 0.57 (0.41), top-author share 0.39.
 * The spec's rules on this scale: merge above 0.85 already compares centred centroids. Raw, 10-35% of the pairs of
 * a busy channel's e5 cluster centroids are above 0.85 (USE-lite: 0 to 1 pair in 200-465), so a raw rule would
 * merge distinct topics until the size cap stops it; centred it fires on no pair (neither at 0.85 nor at 0.7), as
 * with USE-lite. Coherence below 0.4 is vacuous on raw e5 vectors: the lowest cluster is at 0.76 and 20 facts
 * picked across a busy channel at 0.90-0.91 (USE-lite: 0.58-0.72). `centredCoherence` reads it on centred vectors,
 * where topic clusters sit at 0.57 (lowest 0.40) and those 20-fact bags at 0.18-0.21: it then still tells a bag of
 * unrelated facts (re-clustered) from a topic, and guards merges and folds. On this data it re-clusters nothing
 * (the clustering above gives no cluster under 0.4 centred); at 0.45 it would re-cluster 8 clusters.
 * Raw coherence stays what is stored and reported.
 * Full generation through the runtime (`BENCH_WIKI_EMBEDDERS=use-lite,e5-small-v2 npm run bench:wiki`, one run;
 * coherence size-weighted over clusters of >= 3, "mean / lowest"; every fact assigned with both):
 *
 * | data set (facts)  | encoder  | clusters >= 3 | topic pages | raw coherence | centred coherence | in topics |
 * |-------------------|----------|---------------|-------------|---------------|-------------------|-----------|
 * | Clojurians (3637) | USE-lite | 399           | 484         | 0.69 / 0.40   | 0.57 / 0.41       | 0.97      |
 * | Clojurians (3637) | e5       | 411           | 537         | 0.85 / 0.76   | 0.57 / 0.40       | 0.95      |
 * | OLake (264)       | USE-lite | 29            | 31          | 0.75 / 0.54   | 0.62 / 0.49       | 0.99      |
 * | OLake (264)       | e5       | 24            | 33          | 0.87 / 0.80   | 0.63 / 0.48       | 0.93      |
 * | Discord (232)     | USE-lite | 22            | 22          | 0.69 / 0.57   | 0.54 / 0.48       | 1.00      |
 * | Discord (232)     | e5       | 31            | 31          | 0.88 / 0.83   | 0.58 / 0.47       | 1.00      |
 *
 * Read (title and 5 key facts of the 6 biggest topic pages of #clojure, #beginners, OLake #help and the Discord
 * channel; one subject when >= 4 of the 5 facts are about the title's subject): USE-lite 12 of 24, e5 11 of 24.
 * Both leave one catch-all page in #clojure (USE-lite "Data", 67 facts; e5 "ClojureScript", 75 facts).
 */
export const E5_CLUSTER_PARAMS: Readonly<ClusterParams> = Object.freeze({
  ...DEFAULT_CLUSTER_PARAMS,
  centredCoherence: true,
});

/** Cluster thresholds per embedder id (the pattern of VECTOR_MATCH_FLOOR in @atlas/query). */
export const CLUSTER_PARAMS: Readonly<Record<string, Readonly<ClusterParams>>> = Object.freeze({
  [USE_LITE_EMBEDDER_ID]: DEFAULT_CLUSTER_PARAMS,
  [E5_EMBEDDER_ID]: E5_CLUSTER_PARAMS,
});

/**
 * The cluster thresholds for vectors of `embedderId` (Embedder.id; CLUSTER_PARAMS); undefined or an embedder not
 * calibrated: DEFAULT_CLUSTER_PARAMS (calibrated on USE-lite).
 */
export const clusterParamsOf = (embedderId?: string): Readonly<ClusterParams> =>
  (embedderId !== undefined && Object.hasOwn(CLUSTER_PARAMS, embedderId) ? CLUSTER_PARAMS[embedderId] : undefined) ??
  DEFAULT_CLUSTER_PARAMS;

/**
 * The coherence of each cluster over channel-centred vectors, as the `centredCoherence` rule reads it: per channel,
 * m = the mean of the unit vectors of its clusters' members, then the coherence of unit(v - m) over each cluster's
 * members; a channel under 20 facts is not centred (raw coherence). `vectors` (fact id → vector, any length; made
 * unit here) must hold every member. Returns one value in [0, 1] per cluster, in order.
 */
export function centredCoherences(
  clusters: readonly TopicCluster[],
  vectors: ReadonlyMap<string, readonly number[]>,
): number[] {
  const units = (c: TopicCluster) => c.member_ids.map((m) => unit(vectors.get(m) as number[]));
  const sums = clusters.map((c) => {
    const us = units(c);
    const sum = new Array<number>(us[0]?.length ?? 0).fill(0);
    for (const u of us) for (let i = 0; i < u.length; i++) sum[i] = sum[i]! + u[i]!;
    return { channel_id: c.channel_id, sum, n: us.length };
  });
  const means = channelMeans(sums.filter((s) => s.n > 0));
  return clusters.map((c) => {
    const m = means.get(c.channel_id);
    const us = units(c);
    return centroidOf(m ? us.map((u) => unit(u.map((x, i) => x - m[i]!))) : us).coherence;
  });
}
