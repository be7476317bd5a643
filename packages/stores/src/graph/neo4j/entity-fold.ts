// The entity fold of applyMessageGraphs: mentions → name, aliases, properties and noisy-or confidence; then the
// supersession overlay (status `superseded`, superseded_by the new entity's name).
import { normalizeEntityName } from '@atlas/core';
import { cmp, type Row, tsMs } from './cypher.js';
import type { FoldState, MentionRow } from './fold-state.js';

/** Sort key of a supersession candidate: new entity's message time, supersession's message time, message id, position. */
type SupersessionKey = [number, number, string, number];

/**
 * Pass 1, per entity, from its mentions in order (message_ts, message id, position): the first mention's name and
 * message, aliases (exact-string union minus the name ignoring case, sorted), their normalised forms, the union of
 * fact ids, properties merged in order, confidence 1 − Π(1 − c) over the mentions, mention_count (distinct
 * messages), last_mentioned_at. Returns the folded fields by id and the ids left without a mention.
 */
export function foldMentions(
  entities: FoldState['entities'],
  now: string,
): { folded: Map<string, Row>; gone: Set<string> } {
  const folded = new Map<string, Row>();
  const gone = new Set<string>();
  for (const r of entities) {
    const id = r.id;
    const ms = r.mentions.sort(
      (a: MentionRow, b: MentionRow) => tsMs(a.ts) - tsMs(b.ts) || cmp(a.uuid, b.uuid) || a.ord - b.ord,
    );
    const first = ms[0];
    if (!first) {
      gone.add(id);
      continue;
    }
    const lowerName = first.name.toLowerCase();
    const aliases = [...new Set(ms.flatMap((m) => m.aliases))].filter((a) => a.toLowerCase() !== lowerName).sort();
    const props: Record<string, string> = {};
    for (const m of ms) Object.assign(props, JSON.parse(m.props) as Record<string, string>);
    let keep = 1;
    for (const m of ms) keep *= 1 - m.confidence;
    folded.set(id, {
      name: first.name,
      norm: normalizeEntityName(first.name),
      aliases,
      alias_norms: [...new Set(ms.flatMap((m) => m.aliases).map(normalizeEntityName))].filter((a) => a !== ''),
      source_fact_ids: [...new Set(ms.flatMap((m) => m.fact_ids))],
      props,
      confidence: 1 - keep,
      mention_count: new Set(ms.map((m) => m.uuid)).size,
      source_message_id: first.smid,
      message_ts: first.ts,
      last_mentioned_at: ms.reduce((a, m) => (tsMs(m.ts) > tsMs(a) ? m.ts : a), first.ts),
      updated_at: now,
    });
  }
  return { folded, gone };
}

/**
 * Pass 2: a certain supersession whose new entity exists marks the old entity `superseded`, superseded_by = the new
 * entity's name; among several, the new entity with the latest message_ts wins (then the latest supersession by
 * message time, message id, position). Others wait until their new entity exists. Returns old entity id → new name.
 */
export function supersededBy(
  supersessions: FoldState['supersessions'],
  folded: ReadonlyMap<string, Row>,
  gone: ReadonlySet<string>,
): Map<string, string> {
  const newest = new Map<string, { key: SupersessionKey; name: string }>();
  for (const s of supersessions) {
    const newId = s.new_id as string;
    if (gone.has(newId)) continue;
    const f = folded.get(newId);
    const name = f ? (f.name as string) : (s.new_name as string | null);
    const newTs = f ? (f.message_ts as string) : (s.new_ts as string | null);
    if (name === null || name === undefined || newTs === null || newTs === undefined) continue;
    const key: SupersessionKey = [tsMs(newTs), tsMs(s.ts as string), s.uuid as string, s.ord as number];
    const cur = newest.get(s.old_id as string);
    if (!cur || (key[0] - cur.key[0] || key[1] - cur.key[1] || cmp(key[2], cur.key[2]) || key[3] - cur.key[3]) > 0) {
      newest.set(s.old_id as string, { key, name });
    }
  }
  return new Map([...newest].map(([id, { name }]) => [id, name]));
}

/**
 * Folds entities from their mentions (see GraphStore): rows `{id, fields}` to SET on the Entity nodes (props as
 * JSON), and the ids of those left without a mention (deleted with their relationships).
 */
export function foldEntities(state: FoldState, now: string): { rows: Row[]; gone: string[] } {
  const { folded, gone } = foldMentions(state.entities, now);
  const superseded = supersededBy(state.supersessions, folded, gone);
  const rows: Row[] = [];
  for (const [id, { props, ...fields }] of folded) {
    const merged = props as Record<string, string>;
    const by = superseded.get(id);
    if (by !== undefined) {
      merged.status = 'superseded';
      merged.superseded_by = by;
    }
    rows.push({ id, fields: { ...fields, props: JSON.stringify(merged) } });
  }
  return { rows, gone: [...gone] };
}
