import { describe, expect, it } from 'vitest';
import {
  DEFAULT_VECTOR_MATCH_FLOOR,
  VECTOR_MATCH_FLOOR,
  vectorFloorOf,
  vectorScore,
  vectorScoreZeroOf,
} from './search.js';

const USE = 'use-lite-512@energetic-ai-0.2.0';
const E5 = 'onnx:e5-small-v2-q';

describe('per-embedder vector calibration', () => {
  it('keeps USE-lite at floor 0.30 and zero 0, and gives e5 its own', () => {
    expect(vectorFloorOf(USE)).toBe(0.3);
    expect(vectorScoreZeroOf(USE)).toBe(0);
    expect(vectorFloorOf(E5)).toBe(VECTOR_MATCH_FLOOR[E5]);
    expect(vectorFloorOf(E5)).toBeGreaterThan(0.7);
    expect(vectorScoreZeroOf(E5)).toBe(vectorFloorOf(E5));
  });

  it('falls back to the default floor and zero 0 for an embedder without calibration', () => {
    expect(vectorFloorOf('text-embedding-3-small')).toBe(DEFAULT_VECTOR_MATCH_FLOOR);
    expect(vectorScoreZeroOf('text-embedding-3-small')).toBe(0);
  });
});

describe('vectorScore', () => {
  it('with zero 0 is the cosine over the best cosine (USE-lite)', () => {
    expect(vectorScore(0.6, 0.6, 0)).toBe(1);
    expect(vectorScore(0.3, 0.6, 0)).toBeCloseTo(0.5, 10);
    expect(vectorScore(-0.2, 0.6, 0)).toBe(0);
  });

  it('rescales from the zero to the best cosine, so a narrow cosine range spans [0, 1] (e5)', () => {
    expect(vectorScore(0.87, 0.87, 0.77)).toBe(1);
    expect(vectorScore(0.82, 0.87, 0.77)).toBeCloseTo(0.5, 10);
    expect(vectorScore(0.77, 0.87, 0.77)).toBe(0);
    expect(vectorScore(0.72, 0.87, 0.77)).toBe(0);
    // Over the best cosine alone the same candidates would all score 0.83-1.
    expect(vectorScore(0.72, 0.87, 0)).toBeGreaterThan(0.82);
  });

  it('scores 0 rather than dividing by zero when no candidate is above the zero', () => {
    expect(vectorScore(0.7, 0.7, 0.77)).toBe(0);
    expect(Number.isFinite(vectorScore(0.77, 0.77, 0.77))).toBe(true);
  });
});
