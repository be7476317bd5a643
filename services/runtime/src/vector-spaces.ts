import { AtlasError } from '@atlas/core';
import type { Embedder, EmbedOptions } from '@atlas/providers';
import type { FactVector, VectorQuery, VectorSpace, VectorSpaceRegistry, VectorStore } from '@atlas/stores';

/** One open vector space: its registry row, the embedder of its model (null when it cannot be had here), its store. */
export interface SpaceHandle {
  space: VectorSpace;
  embedder: Embedder | null;
  store: VectorStore;
  /** Drops the space's index (its table or collection). */
  drop(): Promise<void>;
}

export interface VectorSpacesOptions {
  registry: VectorSpaceRegistry;
  /** Opens a registered space: its store (made if absent) and the embedder of its model (null: not available here). */
  open(space: VectorSpace): Promise<SpaceHandle>;
  /** The embedder configuration asks for: the model every space is rebuilt towards. */
  target: Embedder;
  /** How often (ms) the registry is read again, so a switch made by another process is followed; default 5,000. */
  refreshMs?: number;
}

/**
 * The vector spaces of a runtime (docs/models.md "Changing the model"): which space search reads and the embeddings
 * projector writes (the active one), and the one being rebuilt beside it. `embedder` and `store` are the runtime's
 * embedder and vector store: they serve the active space, and every query vector is routed back to the space whose
 * model made it, so a query embedded just before a switch is still searched in its own space and no query ever mixes
 * two. A switch (`activate`) is one registry transaction plus one assignment here; other processes follow within
 * `refreshMs`.
 */
export class VectorSpaces {
  private readonly handles = new Map<string, SpaceHandle>();
  private activeId: string | null = null;
  /** Which space made a vector this process embedded (query vectors, and the points of a write). */
  private readonly madeBy = new WeakMap<readonly number[], { spaceId: string; model: string }>();
  private lastRefresh = 0;
  private refreshing: Promise<void> | null = null;
  readonly embedder: Embedder & { readonly isWarm: boolean; warm(): Promise<boolean> };
  readonly store: VectorStore;

  constructor(private readonly opts: VectorSpacesOptions) {
    this.embedder = new SpaceEmbedder(this);
    this.store = new SpaceStore(this);
  }

  /** The configured embedder (rebuilds embed with it). */
  get target(): Embedder {
    return this.opts.target;
  }

  /** Reads the registry and opens the spaces it lists that are not open yet. Call once before use. */
  async load(): Promise<void> {
    const spaces = await this.opts.registry.list();
    for (const s of spaces) {
      const open = this.handles.get(s.id);
      if (open) open.space = s;
      else if (s.state !== 'retired') this.handles.set(s.id, await this.opts.open(s));
    }
    for (const id of [...this.handles.keys()]) if (!spaces.some((s) => s.id === id)) this.handles.delete(id);
    this.activeId = spaces.find((s) => s.state === 'active')?.id ?? null;
    this.lastRefresh = Date.now();
  }

  /** Reads the registry again when the last read is older than refreshMs (a switch by another process). */
  async refresh(): Promise<void> {
    if (Date.now() - this.lastRefresh < (this.opts.refreshMs ?? 5_000)) return;
    this.refreshing ??= this.load().finally(() => {
      this.refreshing = null;
    });
    await this.refreshing;
  }

  /** The active space. Errors: STORE_UNAVAILABLE before load or when the registry has none. */
  active(): SpaceHandle {
    const h = this.activeId ? this.handles.get(this.activeId) : undefined;
    if (!h) throw new AtlasError('STORE_UNAVAILABLE', 'no active vector space', { retriable: true });
    return h;
  }

  /** The space being built, or null. */
  building(): SpaceHandle | null {
    return [...this.handles.values()].find((h) => h.space.state === 'building') ?? null;
  }

  /** Every open space (active, building, retired not yet dropped). */
  all(): SpaceHandle[] {
    return [...this.handles.values()];
  }

  /** Whether the active space holds vectors of another model than the configured one (a rebuild is due). */
  needsRebuild(): boolean {
    return this.activeId !== null && this.active().space.model !== this.opts.target.id;
  }

  /**
   * The space being built towards the configured model: the registered one when it is of that model (a rebuild
   * resumed), else a new one (a building space of another model is dropped first). `fresh` says whether it is new
   * (its consumer group must start from the beginning). `force` makes a new one even when a space of the model is
   * active (a rebuild on demand).
   */
  async beginBuilding(
    kind: 'pgvector' | 'qdrant',
    qdrantPrefix?: string,
  ): Promise<{ handle: SpaceHandle; fresh: boolean }> {
    await this.load();
    const current = this.building();
    if (current && current.space.model === this.opts.target.id) return { handle: current, fresh: false };
    if (current) await this.dropSpace(current);
    const space = await this.opts.registry.create({
      model: this.opts.target.id,
      dim: this.opts.target.dim,
      state: 'building',
      kind,
      ...(qdrantPrefix ? { qdrantPrefix } : {}),
    });
    const handle = await this.opts.open(space);
    this.handles.set(space.id, handle);
    return { handle, fresh: true };
  }

  /** Switches search and the embeddings projector to the building space `id` (one transaction). Returns the retired. */
  async activate(id: string): Promise<SpaceHandle | null> {
    const retired = await this.opts.registry.activate(id);
    await this.load();
    return retired ? { ...(this.handles.get(retired.id) ?? (await this.opts.open(retired))), space: retired } : null;
  }

  /** Drops a space's index and forgets it (a retired space once no query can be reading it). */
  async dropSpace(h: SpaceHandle): Promise<void> {
    await h.drop();
    await this.opts.registry.remove(h.space.id);
    this.handles.delete(h.space.id);
  }

  /** Drops every retired space. Returns how many. */
  async dropRetired(): Promise<number> {
    const retired = (await this.opts.registry.list()).filter((s) => s.state === 'retired');
    for (const s of retired) await this.dropSpace(this.handles.get(s.id) ?? (await this.opts.open(s)));
    return retired.length;
  }

  /** Records which space (and model) made these vectors (SpaceEmbedder). */
  mark(vectors: readonly (readonly number[])[], space: { id: string; model: string }): void {
    const made = { spaceId: space.id, model: space.model };
    for (const v of vectors) this.madeBy.set(v, made);
  }

  /** The model of the space that made `vector` here (SpaceEmbedder marks each), even once it is retired; else undefined. */
  modelOf(vector: readonly number[]): string | undefined {
    return this.madeBy.get(vector)?.model;
  }

  /**
   * The space a vector belongs to: the one whose embedder made it here, else the active space when `model` is its
   * model, else any open space of `model`. Errors: STORE_UNAVAILABLE (retriable) when no open space has that model
   * (a write embedded before a switch whose old space is gone: the batch is retried with the new model).
   */
  spaceOf(vector: readonly number[], model: string): SpaceHandle {
    const made = this.madeBy.get(vector);
    const h = made ? this.handles.get(made.spaceId) : undefined;
    if (h) return h;
    const active = this.active();
    if (active.space.model === model) return active;
    const other = [...this.handles.values()].find((x) => x.space.model === model && x.space.state !== 'building');
    if (other) return other;
    throw new AtlasError('STORE_UNAVAILABLE', `no vector space of model ${model} (the model changed)`, {
      retriable: true,
    });
  }

  /** Closes every space's embedder. */
  async close(): Promise<void> {
    const embedders = new Set([this.opts.target, ...this.all().map((h) => h.embedder)]);
    for (const e of embedders) await e?.close?.();
  }
}

/** The runtime's embedder: the active space's model; every vector it returns is marked with its space. */
class SpaceEmbedder implements Embedder {
  constructor(private readonly spaces: VectorSpaces) {}

  get id(): string {
    return this.spaces.active().space.model;
  }

  get dim(): number {
    return this.spaces.active().space.dim;
  }

  /** Whether the active space's embedder has answered (GuardedEmbedder.isWarm; true for one without the notion). */
  get isWarm(): boolean {
    const e = this.spaces.active().embedder as { isWarm?: boolean } | null;
    return e?.isWarm !== false;
  }

  async warm(): Promise<boolean> {
    const e = this.spaces.active().embedder as { warm?: () => Promise<boolean> } | null;
    return e?.warm ? e.warm() : true;
  }

  /** The model that made a vector this embedder returned (VectorSpaces.modelOf; Embedder.modelOf). */
  modelOf(vector: readonly number[]): string | undefined {
    return this.spaces.modelOf(vector);
  }

  async embed(texts: readonly string[], opts?: EmbedOptions): Promise<number[][]> {
    await this.spaces.refresh();
    const h = this.spaces.active();
    if (!h.embedder) {
      const why = `the embedder of vector space ${h.space.id} (${h.space.model}) is not available`;
      throw new AtlasError('PROVIDER_UNAVAILABLE', why, { retriable: true });
    }
    const vectors = await h.embedder.embed(texts, opts);
    this.spaces.mark(vectors, h.space);
    return vectors;
  }

  async close(): Promise<void> {
    await this.spaces.close();
  }
}

/**
 * The runtime's vector store: reads and writes of a vector go to the space that made it (VectorSpaces.spaceOf); the
 * rest (counts, vectorsOf, deletes, warm-up) to the active space, read again from the registry first (refresh): a
 * process that never embeds (`atlas run wiki`) follows a switch made elsewhere too. The building space is written
 * only by the rebuild.
 */
class SpaceStore implements VectorStore {
  constructor(private readonly spaces: VectorSpaces) {}

  /** The active space's store, after reading the registry when due (VectorSpaces.refresh). */
  private async current(): Promise<VectorStore> {
    await this.spaces.refresh();
    return this.spaces.active().store;
  }

  async truncate(): Promise<void> {
    return (await this.current()).truncate();
  }

  async replaceForMessages(sets: readonly { messageId: string; points: readonly FactVector[] }[]): Promise<void> {
    const bySpace = new Map<SpaceHandle, { messageId: string; points: FactVector[] }[]>();
    for (const s of sets) {
      // A message's points come from one embed call; a set without points removes the message's vectors (active).
      const h = s.points[0] ? this.spaces.spaceOf(s.points[0].vector, s.points[0].model) : this.spaces.active();
      const list = bySpace.get(h) ?? [];
      list.push({ messageId: s.messageId, points: [...s.points] });
      bySpace.set(h, list);
    }
    for (const [h, list] of bySpace) await h.store.replaceForMessages(list);
  }

  /**
   * A query is read in the space whose model made its vector, under that model (a query embedded just before a
   * switch carries the old model's vector and may read the new model's id: it is searched in the old space).
   */
  private routed<Q extends { vector: number[]; model: string }>(q: Q): { store: VectorStore; q: Q } {
    const h = this.spaces.spaceOf(q.vector, q.model);
    return { store: h.store, q: h.space.model === q.model ? q : { ...q, model: h.space.model } };
  }

  search(query: VectorQuery): Promise<{ factId: string; score: number }[]> {
    const { store, q } = this.routed(query);
    return store.search(q);
  }

  matches(query: VectorQuery & { minScore: number }): Promise<{ factId: string; score: number }[]> {
    const { store, q } = this.routed(query);
    return store.matches(q);
  }

  similarities(query: { vector: number[]; model: string; factIds: readonly string[] }): Promise<Map<string, number>> {
    const { store, q } = this.routed(query);
    return store.similarities(q);
  }

  async vectorsOf(factIds: readonly string[]): Promise<Map<string, number[]>> {
    return (await this.current()).vectorsOf(factIds);
  }

  async count(): Promise<number> {
    return (await this.current()).count();
  }

  async deleteChannel(channelId: string): Promise<number> {
    return (await this.current()).deleteChannel(channelId);
  }

  isWarm(channelId: string | null): boolean {
    return this.spaces.active().store.isWarm?.(channelId) ?? true;
  }

  async warm(): Promise<number> {
    return (await (await this.current()).warm?.()) ?? 0;
  }
}
