/**
 * Author centring, applied to fact vectors before clustering (generate.ts): v' = unit(v - beta * a), `a` the mean of
 * the unit vectors of all the channel's facts by the same author, for authors with at least `minFacts` facts.
 * Why: fact texts name their author ("noisesmith would avoid ..."), and the encoder places a prolific author's facts
 * close together whatever they are about, so topics came out as one person's voice. Measured on the 3 busiest
 * Clojurians channels (clusters after a full pass, size-weighted share of each cluster's commonest author): beta 0:
 * 0.38, 0.53, 0.59; beta 0.5: 0.20, 0.32, 0.44, with the same cluster counts (30/31, 24/24, 18/15) and clusters that
 * read as topics (installing and upgrading leiningen; java interop) instead of one author's afternoon.
 *
 * The thresholds re-checked with centring (all 82 Clojurians channels, full pass, size-weighted figures; "busiest":
 * clusters/largest of the 5 busiest channels):
 *
 * | beta | assign / fold | clusters | singletons | coherence (lowest) | topic share | top-author share | busiest |
 * |------|---------------|----------|------------|--------------------|-------------|------------------|---------|
 * | 0    | 0.15 / 0.1    | 336      | 22         | 0.79 (0.61)        | 0.98        | 0.52             | 20/84 17/48 14/25 14/42 14/47 |
 * | 0    | 0.2 / 0.1     | 404      | 29         | 0.81 (0.59)        | 0.97        | 0.57             | 30/42 24/33 18/23 19/33 21/24 |
 * | 0    | 0.25 / 0.15   | 500      | 79         | 0.82 (0.66)        | 0.94        | 0.61             | 39/34 24/26 24/15 25/30 24/22 |
 * | 0.5  | 0.15 / 0.1    | 382      | 34         | 0.68 (0.40)        | 0.96        | 0.39             | 20/74 17/48 14/30 15/35 18/35 |
 * | 0.5  | **0.2 / 0.1** | 438      | 50         | 0.70 (0.41)        | 0.95        | 0.41             | 31/61 24/43 15/29 22/29 19/30 |
 * | 0.5  | 0.25 / 0.15   | 593      | 131        | 0.74 (0.42)        | 0.91        | 0.46             | 48/55 36/38 22/28 28/33 24/26 |
 *
 * Kept: assign 0.2, fold 0.1 (the middle row: 95% of facts in topics of >= 3, no cluster under the spec's 0.4).
 * Centring costs coherence (it removes the shared author direction), and the lowest clusters now sit at the 0.4 rule.
 */
export const AUTHOR_CENTRING = Object.freeze({ beta: 0.5, minFacts: 3 });

/**
 * Author centring for e5-small-v2 vectors (`onnx:e5-small-v2-q`): the same beta. Measured on the real exports
 * (Clojurians, OLake, Discord; 86 channels, assign 0.2 / fold 0.1, full pass; size-weighted over clusters of >= 3):
 * beta 0: 567 clusters, 97% of facts in topics, top-author share 0.53; beta 0.5: 601, 95%, 0.39; beta 0.7: 603,
 * 94%, 0.37. As with USE-lite, e5 places one author's facts together (0.53 without centring); 0.5 removes most of it,
 * 0.7 adds little and costs topic share. Details: E5_CLUSTER_PARAMS in clusters.ts.
 */
export const E5_AUTHOR_CENTRING = Object.freeze({ beta: 0.5, minFacts: 3 });

/** Author centring per embedder id (Embedder.id of the vectors). */
export const AUTHOR_CENTRING_BY_EMBEDDER: Readonly<Record<string, Readonly<{ beta: number; minFacts: number }>>> =
  Object.freeze({
    'use-lite-512@energetic-ai-0.2.0': AUTHOR_CENTRING,
    'onnx:e5-small-v2-q': E5_AUTHOR_CENTRING,
  });

/** The author centring for vectors of `embedderId` (AUTHOR_CENTRING_BY_EMBEDDER); unknown or undefined: AUTHOR_CENTRING. */
export const authorCentringOf = (embedderId?: string): Readonly<{ beta: number; minFacts: number }> =>
  (embedderId !== undefined && Object.hasOwn(AUTHOR_CENTRING_BY_EMBEDDER, embedderId)
    ? AUTHOR_CENTRING_BY_EMBEDDER[embedderId]
    : undefined) ?? AUTHOR_CENTRING;

/** Per author: the sum of the vectors of their facts and how many were summed (authorSums). */
export type AuthorSums = Map<string, { sum: number[]; n: number }>;

/** The vector sum and count per author over `vectors` (fact id → vector; `authorOf`: fact id → author). */
export function authorSums(
  vectors: ReadonlyMap<string, readonly number[]>,
  authorOf: ReadonlyMap<string, string>,
): AuthorSums {
  const sums: AuthorSums = new Map();
  for (const [id, v] of vectors) {
    const a = authorOf.get(id);
    if (a !== undefined) addToSum(sums, a, v);
  }
  return sums;
}

/** Adds one vector to an author's sum (creating it). */
export function addToSum(sums: AuthorSums, author: string, v: readonly number[]): void {
  let s = sums.get(author);
  if (!s) {
    s = { sum: new Array<number>(v.length).fill(0), n: 0 };
    sums.set(author, s);
  }
  for (let i = 0; i < v.length; i++) s.sum[i]! += v[i]!;
  s.n++;
}

/**
 * Author-centred vectors (AUTHOR_CENTRING) of the facts in `ids`: `vectors` must hold the vectors of every fact of
 * the channel by those facts' authors (the author means are taken over them), unless `sums` gives the authors' sums
 * (authorSums over those vectors: a long-lived generator keeps them between runs); `authorOf` maps fact id to
 * author. Facts whose author has fewer than `minFacts` facts with vectors keep their vector. Returns unit vectors.
 */
export function authorCentred(
  ids: Iterable<string>,
  vectors: ReadonlyMap<string, readonly number[]>,
  authorOf: ReadonlyMap<string, string>,
  opts: { beta: number; minFacts: number } = AUTHOR_CENTRING,
  sums: AuthorSums = authorSums(vectors, authorOf),
): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const id of ids) {
    const v = vectors.get(id);
    if (!v) continue;
    const s = sums.get(authorOf.get(id) ?? '');
    if (!s || s.n < opts.minFacts) {
      out.set(id, [...v]);
      continue;
    }
    const w = v.map((x, i) => x - (opts.beta * s.sum[i]!) / s.n);
    const norm = Math.hypot(...w) || 1;
    out.set(
      id,
      w.map((x) => x / norm),
    );
  }
  return out;
}
