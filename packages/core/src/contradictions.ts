import { z } from 'zod';
import { deterministicId } from './ids.js';

/** How an admin resolved a potential contradiction (issue 27, point 5). */
export const CONTRADICTION_OUTCOMES = ['earlier', 'later', 'both'] as const;
export const ContradictionOutcome = z.enum(CONTRADICTION_OUTCOMES);
export type ContradictionOutcome = z.infer<typeof ContradictionOutcome>;

/**
 * The id of the potential contradiction between an earlier fact and the later fact that may contradict it (a
 * Supersession with certain=false): UUID v5 of both fact ids, so every process and every replay names it alike.
 */
export const contradictionId = (factId: string, supersededBy: string): string =>
  deterministicId('contradiction', factId, supersededBy);

/**
 * Data of `ContradictionResolved` (atlas.graph, key channel_id): an admin's resolution of a potential contradiction
 * (issue 27, point 5; POST /api/contradictions/{id}/resolve). The documents projector records it beside the
 * supersession it resolves (first resolution of an id wins; a redelivery or a replay writes the same row), and the
 * memories then read: `earlier` the earlier fact stands (flag cleared, nothing superseded); `later` the later one
 * stands (the earlier fact gets superseded_by = `supersededBy`, invalid_at = `invalidAt`); `both` both stand (flag
 * cleared, both valid). The wiki projector marks the channel's wiki stale.
 * - `contradictionId`: contradictionId(factId, supersededBy);
 * - `factId`: the earlier fact; `supersededBy`: the later fact;
 * - `invalidAt`: ISO 8601 UTC time of the later fact's message (when the earlier one stopped being valid, for `later`);
 * - `note`: the admin's note, or null; `resolvedBy`: the principal's name; `resolvedAt`: ISO 8601 UTC.
 */
export const ContradictionResolved = z.object({
  contradictionId: z.string().uuid(),
  channelId: z.string().min(1),
  factId: z.string().uuid(),
  supersededBy: z.string().uuid(),
  outcome: ContradictionOutcome,
  invalidAt: z.string(),
  note: z.string().nullable(),
  resolvedBy: z.string(),
  resolvedAt: z.string(),
});
export type ContradictionResolved = z.infer<typeof ContradictionResolved>;
