import type { DatabaseHandle } from '@atlas/db';
import { type MigrationDb, runMigrations } from '@atlas/db';
import { type Kysely, sql } from 'kysely';

/**
 * A vector space: the vectors of one embedding model in one index of the vector store (a pgvector table, a Qdrant
 * collection). `active` is the space search and ask read and the embeddings projector writes; `building` is one being
 * filled by replaying atlas.facts from the beginning under its own consumer group (docs/models.md "Changing the
 * model"); `retired` is a former active space whose index is dropped once no query can still be reading it.
 */
export type VectorSpaceState = 'building' | 'active' | 'retired';

export interface VectorSpace {
  /** Registry key, `s<n>`; names the index of a space made by Atlas (vectorSpaceIndex). */
  id: string;
  /** The embedder id every vector of the space carries (Embedder.id). */
  model: string;
  dim: number;
  /** The pgvector table or Qdrant collection holding the space's vectors. */
  index: string;
  state: VectorSpaceState;
  /** ISO-8601. */
  createdAt: string;
  /** ISO-8601; null while building. */
  activatedAt: string | null;
}

type SpaceTables = {
  vector_spaces: {
    seq: number;
    model: string;
    dim: number;
    index_name: string;
    state: VectorSpaceState;
    created_at: Date | string;
    activated_at: Date | string | null;
  };
};

/** Creates the registry table (`vector_spaces`). Idempotent. */
export const migrateVectorSpaces = (db: MigrationDb) =>
  runMigrations(db, 'vector_spaces', {
    '0001_vector_spaces': {
      async up(db: MigrationDb) {
        await sql`create table if not exists vector_spaces (seq serial primary key, model text not null,
          dim integer not null, index_name text not null unique, state text not null,
          created_at timestamptz not null default now(), activated_at timestamptz)`.execute(db);
        // At most one active and one building space.
        await sql`create unique index if not exists vector_spaces_one_per_state on vector_spaces (state)
          where state in ('active', 'building')`.execute(db);
      },
    },
  });

/**
 * The index name of a space Atlas makes: `vector_space_<seq>` for pgvector, `<QDRANT_COLLECTION>_space_<seq>` for
 * Qdrant (a prefix). A plain SQL identifier either way.
 */
export const vectorSpaceIndex = (kind: 'pgvector' | 'qdrant', seq: number, qdrantPrefix = 'atlas_facts'): string =>
  kind === 'pgvector' ? `vector_space_${seq}` : `${qdrantPrefix}_space_${seq}`;

const iso = (t: Date | string | null): string | null => (t === null ? null : new Date(t).toISOString());
const toSpace = (r: SpaceTables['vector_spaces']): VectorSpace => ({
  id: `s${r.seq}`,
  model: r.model,
  dim: Number(r.dim),
  index: r.index_name,
  state: r.state,
  createdAt: iso(r.created_at)!,
  activatedAt: iso(r.activated_at),
});
const seqOf = (id: string): number => Number(id.replace(/^s/, ''));

/**
 * The vector space registry (`vector_spaces`, in the database of the other stores even when the vectors are in
 * Qdrant): which space is active, which is building, which are retired. Every change is one statement or one
 * transaction, so readers see one active space at every instant. Needs migrateVectorSpaces. Errors: the database's.
 */
export class VectorSpaceRegistry {
  private readonly db: Kysely<SpaceTables>;

  constructor(db: DatabaseHandle['db']) {
    this.db = db.withTables<SpaceTables>();
  }

  /** Every registered space, oldest first. */
  async list(): Promise<VectorSpace[]> {
    const rows = await this.db.selectFrom('vector_spaces').selectAll().orderBy('seq').execute();
    return rows.map(toSpace);
  }

  /** The active space, or null before the first. */
  async active(): Promise<VectorSpace | null> {
    return (await this.list()).find((s) => s.state === 'active') ?? null;
  }

  /** The space being built, or null. */
  async building(): Promise<VectorSpace | null> {
    return (await this.list()).find((s) => s.state === 'building') ?? null;
  }

  /**
   * Registers a space of `model` in state `state` (`active` only when there is none: the first space, or a legacy
   * index adopted on upgrade). `index` names the index; default vectorSpaceIndex(kind, seq, qdrantPrefix).
   * Errors: the unique index's when a space of that state exists already.
   */
  async create(opts: {
    model: string;
    dim: number;
    state: 'building' | 'active';
    kind: 'pgvector' | 'qdrant';
    qdrantPrefix?: string;
    index?: string;
  }): Promise<VectorSpace> {
    return this.db.transaction().execute(async (trx) => {
      const { seq } = await trx
        .insertInto('vector_spaces')
        .values({
          model: opts.model,
          dim: opts.dim,
          index_name: `pending_${Date.now()}_${Math.random().toString(36).slice(2)}`,
          state: opts.state,
          activated_at: opts.state === 'active' ? new Date().toISOString() : null,
        } as never)
        .returning('seq')
        .executeTakeFirstOrThrow();
      const row = await trx
        .updateTable('vector_spaces')
        .set({ index_name: opts.index ?? vectorSpaceIndex(opts.kind, Number(seq), opts.qdrantPrefix) })
        .where('seq', '=', seq)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toSpace(row);
    });
  }

  /**
   * Makes the building space `id` the active one and the active one retired, in one transaction (the switch). Returns
   * the retired space, or null when there was no active one. Errors: INVALID when `id` is not building.
   */
  async activate(id: string): Promise<VectorSpace | null> {
    return this.db.transaction().execute(async (trx) => {
      const target = await trx.selectFrom('vector_spaces').selectAll().where('seq', '=', seqOf(id)).executeTakeFirst();
      if (target?.state !== 'building') throw new Error(`vector space ${id} is not building`);
      const retired = await trx
        .updateTable('vector_spaces')
        .set({ state: 'retired' })
        .where('state', '=', 'active')
        .returningAll()
        .executeTakeFirst();
      await trx
        .updateTable('vector_spaces')
        .set({ state: 'active', activated_at: new Date().toISOString() })
        .where('seq', '=', seqOf(id))
        .execute();
      return retired ? toSpace(retired) : null;
    });
  }

  /** Forgets a space (after its index was dropped). Idempotent. */
  async remove(id: string): Promise<void> {
    await this.db.deleteFrom('vector_spaces').where('seq', '=', seqOf(id)).execute();
  }
}
