// The relationship fold of applyMessageGraphs: evidence → one REL per relationship id.
import { cmp, type Row, tsMs } from './cypher.js';
import type { EvidenceRow, RelRef } from './fold-state.js';

/**
 * Folds relationships from their evidence, in order (valid_from, message time, message id, position): rows
 * `{id, source_id, target_id, fields}` to MERGE (confidence 1 − Π(1 − c), valid_until from the latest evidence,
 * the rest from the first), and the `refs` left without evidence (deleted).
 */
export function foldRelationships(evidence: EvidenceRow[], refs: RelRef[]): { rows: Row[]; gone: RelRef[] } {
  const byRel = new Map<string, EvidenceRow[]>();
  for (const v of evidence) {
    const list = byRel.get(v.rel_id) ?? [];
    list.push(v);
    byRel.set(v.rel_id, list);
  }
  const rows: Row[] = [];
  const gone: RelRef[] = [];
  for (const ref of refs) {
    const ev = (byRel.get(ref.id) ?? []).sort(
      (a, b) =>
        cmp(a.valid_from, b.valid_from) ||
        tsMs(a.message_ts) - tsMs(b.message_ts) ||
        cmp(a.message_uuid, b.message_uuid) ||
        a.ord - b.ord,
    );
    const first = ev[0];
    const last = ev[ev.length - 1];
    if (!first || !last) {
      gone.push(ref);
      continue;
    }
    let keep = 1;
    for (const v of ev) keep *= 1 - v.confidence;
    rows.push({
      id: ref.id,
      source_id: first.source_id,
      target_id: first.target_id,
      fields: {
        type: first.type,
        channel_id: first.channel_id,
        confidence: 1 - keep,
        valid_from: first.valid_from,
        valid_until: last.valid_until ?? null,
        context: first.context,
        source_message_id: first.source_message_id,
        source_fact_id: first.source_fact_id ?? null,
      },
    });
  }
  return { rows, gone };
}
