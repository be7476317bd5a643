import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AtlasError, ERROR_STATUS, errorBody } from './errors.js';

describe('AtlasError', () => {
  it('maps each code to its status and keeps details, cause and the retriable flag', () => {
    const cause = new Error('socket closed');
    const e = new AtlasError('STORE_UNAVAILABLE', 'db down', { retriable: true, details: { store: 'pg' }, cause });
    expect(e.status).toBe(503);
    expect(e.retriable).toBe(true);
    expect(e.cause).toBe(cause);
    expect(errorBody(e.code, e.message, e.details)).toEqual({
      error: { code: 'STORE_UNAVAILABLE', message: 'db down', details: { store: 'pg' } },
    });
    expect(errorBody('NOT_FOUND', 'x')).toEqual({ error: { code: 'NOT_FOUND', message: 'x' } });
  });

  it('every error code stands in the error table of docs/errors.md with its status', () => {
    const table = readFileSync(path.resolve(import.meta.dirname, '../../../docs/errors.md'), 'utf8');
    for (const [code, status] of Object.entries(ERROR_STATUS)) {
      expect(table, code).toMatch(new RegExp(`\\| \`${code}\` \\| ${status} \\|`));
    }
  });
});
