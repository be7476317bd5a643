import type { WikiVersionSummary } from './types.js';

/** A timestamp as read (Date or string) as ISO 8601 UTC; null stays null. */
export const iso = (v: unknown): string | null => (v == null ? null : new Date(v as string | Date).toISOString());
/** A JSON column as read: parsed when the driver returned text. */
export const parsed = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));

/**
 * A stored centroid back as numbers: from centroid_f32, each component rounded to 7 decimals (float32 carries about
 * 7 significant digits, so 0.6 reads back as 0.6; a unit vector's cosines move by under 1e-6), or from the jsonb of
 * a row written before 0007.
 */
export const centroidOf = (f32: string | null, json: unknown): number[] => {
  if (f32 == null) return parsed<number[]>(json);
  const b = Buffer.from(f32, 'base64');
  const out = new Array<number>(b.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = Math.round(b.readFloatLE(i * 4) * 1e7) / 1e7;
  return out;
};

/** A wiki_versions row's summary columns as read. */
export type VersionRow = {
  version_number: number;
  channel_id: string;
  generated_at: unknown;
  archived_at: unknown;
  page_count: number;
  model: string;
};
/** A wiki_versions row as the version summary the API shows. */
export const toSummary = (x: VersionRow): WikiVersionSummary => ({
  version_number: Number(x.version_number),
  channel_id: x.channel_id,
  generated_at: iso(x.generated_at)!,
  archived_at: iso(x.archived_at),
  page_count: Number(x.page_count),
  model: x.model,
});
