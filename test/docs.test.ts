import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The README and the pages of docs/ stay navigable: every relative link points at a file of the repository, and at a
 * heading of it when the link names one (GitHub's anchors); the package map of docs/design.md names every package and
 * service. A link to a page that other work is still writing is allowed only in docs/README.md, followed by
 * "(being written)", and only while the page does not exist (then the marker goes).
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const DOCS = path.join(ROOT, 'docs');
const PENDING = '(being written)';

const pages = [
  path.join(ROOT, 'README.md'),
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join(DOCS, f)),
];

/** Lines outside fenced code blocks, with their 1-based numbers. */
const proseLines = (markdown: string): { text: string; line: number }[] => {
  const out: { text: string; line: number }[] = [];
  let fence: string | undefined;
  for (const [i, text] of markdown.split('\n').entries()) {
    const open = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (open && (!fence || open.startsWith(fence))) {
      fence = fence ? undefined : open;
      continue;
    }
    if (!fence) out.push({ text, line: i + 1 });
  }
  return out;
};

/** GitHub's anchor of a heading: its text lowercased, punctuation dropped, spaces as hyphens; repeats get -1, -2, ... */
const headingAnchors = (markdown: string): Set<string> => {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/[`*]/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
};

interface Link {
  target: string;
  line: number;
  pending: boolean;
}

/** Inline links and images outside code (fences and spans) whose target is not a URL with a scheme. */
const relativeLinks = (markdown: string): Link[] =>
  proseLines(markdown).flatMap(({ text, line }) =>
    [...text.replace(/`[^`]*`/g, '``').matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)( \(being written\))?/g)]
      .filter((m) => !/^[a-z][a-z0-9+.-]*:/i.test(m[1]!))
      .map((m) => ({ target: m[1]!, line, pending: m[2] !== undefined })),
  );

describe('links in README.md and docs/*.md', () => {
  for (const page of pages) {
    const name = path.relative(ROOT, page);
    it(`${name}: every relative link resolves`, () => {
      const problems: string[] = [];
      for (const { target, line, pending } of relativeLinks(readFileSync(page, 'utf8'))) {
        const [file, anchor] = target.split('#', 2) as [string, string | undefined];
        const resolved = file === '' ? page : path.resolve(path.dirname(page), decodeURI(file));
        const where = `${name}:${line} → ${target}`;
        if (path.relative(ROOT, resolved).startsWith('..')) {
          problems.push(`${where}: leaves the repository (a clone has nothing beside it)`);
          continue;
        }
        if (pending && page === path.join(DOCS, 'README.md')) {
          if (existsSync(resolved)) problems.push(`${where}: the page exists now; drop "${PENDING}"`);
          continue;
        }
        if (!existsSync(resolved)) {
          problems.push(`${where}: no such file`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!resolved.endsWith('.md') || statSync(resolved).isDirectory()) {
          problems.push(`${where}: an anchor into a file that is not Markdown`);
          continue;
        }
        if (!headingAnchors(readFileSync(resolved, 'utf8')).has(anchor))
          problems.push(`${where}: no heading with that anchor`);
      }
      expect(problems).toEqual([]);
    });
  }
});

describe('docs/design.md', () => {
  it('links the README of every package and service', () => {
    const design = readFileSync(path.join(DOCS, 'design.md'), 'utf8');
    const linked = new Set(relativeLinks(design).map((l) => path.resolve(DOCS, l.target.split('#')[0]!)));
    const missing = ['packages', 'services'].flatMap((dir) =>
      readdirSync(path.join(ROOT, dir))
        .filter((d) => existsSync(path.join(ROOT, dir, d, 'package.json')))
        .map((d) => path.join(ROOT, dir, d, 'README.md'))
        .filter((readme) => !linked.has(readme))
        .map((readme) => path.relative(ROOT, readme)),
    );
    expect(missing).toEqual([]);
  });
});

describe('headingAnchors', () => {
  it("spells anchors as GitHub does (code, punctuation, repeats) and ignores '#' lines in code fences", () => {
    const md = [
      '# Try sync without credentials (`ADAPTER_MOCK=true`)',
      '## bench:wiki',
      '## Edits, deletes, retention',
      '## Notes',
      '## Notes',
      '```sh',
      '# not a heading',
      '```',
    ].join('\n');
    expect([...headingAnchors(md)]).toEqual([
      'try-sync-without-credentials-adapter_mocktrue',
      'benchwiki',
      'edits-deletes-retention',
      'notes',
      'notes-1',
    ]);
  });
});
