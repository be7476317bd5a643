import type { Fact } from '@atlas/core';

/**
 * Keeps the facts whose quality_score is at least `threshold` (spec "Memory" bands; QUALITY_THRESHOLD, default 0.5),
 * in their original order. Pure; `threshold` is a number in [0, 1].
 */
export const selectFacts = (facts: readonly Fact[], threshold: number): Fact[] =>
  facts.filter((f) => f.qualityScore >= threshold);
