import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { generateApiTypes } from '../scripts/web-api-types.js';

// The web UI is typed from the served OpenAPI document (issue 26): a route or schema change without regenerated types
// fails here. Regenerate with `npm run web:api-types`.
it('web/src/api/schema.d.ts matches the OpenAPI document the API serves now', async () => {
  const committed = readFileSync(path.resolve(import.meta.dirname, '../web/src/api/schema.d.ts'), 'utf8');
  const now = await generateApiTypes();
  expect(committed === now, 'web/src/api/schema.d.ts is out of date: run npm run web:api-types').toBe(true);
}, 120_000);
