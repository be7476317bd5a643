/**
 * Narrowing helpers for untyped export JSON. Every reader returns `undefined` (or `[]`) for a missing or
 * mistyped field, so mappers can apply their own fallbacks without casts.
 */
export type JsonObject = Record<string, unknown>;

export const isObj = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Field `k` of `o` when it is an object. */
export const obj = (o: unknown, k: string): JsonObject | undefined => {
  const v = isObj(o) ? o[k] : undefined;
  return isObj(v) ? v : undefined;
};

/** Field `k` of `o` when it is an array (else []). */
export const arr = (o: unknown, k: string): unknown[] => {
  const v = isObj(o) ? o[k] : undefined;
  return Array.isArray(v) ? v : [];
};

/** Field `k` of `o` when it is a string (numbers are converted: some exports write ids as numbers). */
export const str = (o: unknown, k: string): string | undefined => {
  const v = isObj(o) ? o[k] : undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
};

/** Field `k` of `o` when it is a non-empty string (after trimming). */
export const nonEmpty = (o: unknown, k: string): string | undefined => {
  const v = str(o, k);
  return v !== undefined && v.trim() !== '' ? v : undefined;
};

/** Field `k` of `o` when it is a finite number. */
export const num = (o: unknown, k: string): number | undefined => {
  const v = isObj(o) ? o[k] : undefined;
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
};

/** `array`, `object`, `null`, `string`... for error messages. */
export const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
