import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from './config.js';

/**
 * docs/configuration.md against the config schema: the table documents every variable the schema reads and no other,
 * and states each default as the schema has it. A row is `| \`NAME\` | default | meaning |` in a table whose header is
 * `| variable | default | meaning |`; the default cell is `unset` (the schema has no default), `empty` (the default
 * is '') or one code span holding the default as the environment would spell it (`8000`, `false`, `0 2 * * *`).
 */
const TABLE = path.resolve(import.meta.dirname, '../../../docs/configuration.md');

interface Row {
  name: string;
  default: string;
  meaning: string;
  line: number;
}

/** Cells of a Markdown table row (an escaped `\|` stays inside its cell). */
const cells = (line: string): string[] =>
  line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());

const configTableRows = (markdown: string): Row[] => {
  const rows: Row[] = [];
  let inTable = false;
  for (const [i, line] of markdown.split('\n').entries()) {
    if (!line.trim().startsWith('|')) {
      inTable = false;
      continue;
    }
    const c = cells(line);
    if (c[0] === 'variable' && c[1] === 'default' && c[2] === 'meaning') {
      inTable = true;
      continue;
    }
    if (!inTable || /^-+$/.test(c[0]!)) continue;
    const name = /^`([A-Z][A-Z0-9_]*)`$/.exec(c[0]!)?.[1];
    // A first cell that is not one variable fails by name, so a grouped row cannot slip through unchecked.
    rows.push({ name: name ?? `unparsed: ${c[0]}`, default: c[1] ?? '', meaning: c[2] ?? '', line: i + 1 });
  }
  return rows;
};

/** What a default cell says the schema's default is: undefined for `unset`, else the string the cell spells. */
const stated = (cell: string): { ok: true; value: string | undefined } | { ok: false } => {
  if (cell === 'unset') return { ok: true, value: undefined };
  if (cell === 'empty') return { ok: true, value: '' };
  const code = /^`([^`]+)`$/.exec(cell);
  return code ? { ok: true, value: code[1] } : { ok: false };
};

describe('docs/configuration.md', () => {
  const rows = configTableRows(readFileSync(TABLE, 'utf8'));
  const schemaNames = Object.keys(ConfigSchema.shape).sort();
  const defaults: Record<string, unknown> = ConfigSchema.parse({}); // an empty environment: every default

  it('has one row per variable, each with a meaning', () => {
    expect(rows.length).toBeGreaterThan(0);
    const seen = new Set<string>();
    for (const r of rows) {
      expect(r.name, `line ${r.line}: one variable per row`).toMatch(/^[A-Z][A-Z0-9_]*$/);
      expect(seen.has(r.name), `line ${r.line}: ${r.name} has a second row`).toBe(false);
      expect(r.meaning, `line ${r.line}: ${r.name} needs a meaning`).not.toBe('');
      seen.add(r.name);
    }
  });

  it('lists every variable of the schema (packages/core/src/config.ts)', () => {
    const documented = new Set(rows.map((r) => r.name));
    expect(schemaNames.filter((n) => !documented.has(n))).toEqual([]);
  });

  it('lists no variable the schema does not read', () => {
    const known = new Set(schemaNames);
    expect(rows.map((r) => r.name).filter((n) => !known.has(n))).toEqual([]);
  });

  it("states each default as the schema's default", () => {
    for (const r of rows) {
      if (!(r.name in ConfigSchema.shape)) continue; // reported by the test above
      const s = stated(r.default);
      expect(s.ok, `line ${r.line}: ${r.name}'s default "${r.default}" is not unset, empty or one \`value\``).toBe(
        true,
      );
      if (!s.ok) continue;
      const actual = defaults[r.name];
      expect(actual === undefined ? undefined : String(actual), `line ${r.line}: ${r.name}'s default`).toBe(s.value);
    }
  });
});
