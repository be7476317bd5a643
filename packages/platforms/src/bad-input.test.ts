import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AtlasError } from '@atlas/core';
import { zipSync } from 'fflate';
import { afterAll, describe, expect, it } from 'vitest';
import { detectFormat, parseDiscordExport, parseSlackExport, planImport } from './index.js';

const DATA = path.resolve(import.meta.dirname, '../../../../shared/data');
const CLOJURIANS = path.join(DATA, 'slack-clojurians-2018-02/export');
const DCE = path.join(DATA, 'discord-ethglobal/ETHGlobal - agentic-ethereum-chat [1319401418532065280].json');
const CHANNELS = ['aleph', 'arachne'];

const tmpRoot = mkdtempSync(path.join(os.tmpdir(), 'atlas-import-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));
let n = 0;
const tmp = (name: string): string => path.join(tmpRoot, `${n++}-${name}`);

/** A small valid Slack export: two clojurians channels, with their day files and users.json. */
function smallExport(): string {
  const dir = tmp('export');
  mkdirSync(dir);
  const channels = JSON.parse(readFileSync(path.join(CLOJURIANS, 'channels.json'), 'utf8')) as { name: string }[];
  writeFileSync(path.join(dir, 'channels.json'), JSON.stringify(channels.filter((c) => CHANNELS.includes(c.name))));
  copyFileSync(path.join(CLOJURIANS, 'users.json'), path.join(dir, 'users.json'));
  for (const ch of CHANNELS) {
    mkdirSync(path.join(dir, ch));
    for (const f of readdirSync(path.join(CLOJURIANS, ch))) {
      copyFileSync(path.join(CLOJURIANS, ch, f), path.join(dir, ch, f));
    }
  }
  return dir;
}

/** Runs `fn`, expects an IMPORT_FAILED AtlasError and returns it. */
async function importFailure(fn: () => Promise<unknown>): Promise<AtlasError> {
  const err = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AtlasError);
  expect((err as AtlasError).code).toBe('IMPORT_FAILED');
  return err as AtlasError;
}

describe('bad input: Slack export', () => {
  it('a small copy plans fine (the baseline for the broken variants)', async () => {
    const plan = await planImport(smallExport());
    expect(plan.channels.map((c) => c.name)).toEqual(CHANNELS);
    expect(plan.messages.length).toBeGreaterThan(10);
  });

  it('a truncated day file names the file and the parser position', async () => {
    const dir = smallExport();
    const file = path.join(dir, 'arachne/2018-02-04.json');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.slice(0, Math.floor(text.length / 2)));
    const err = await importFailure(() => planImport(dir));
    expect(err.details?.file).toBe('arachne/2018-02-04.json');
    expect(err.message).toMatch(/^arachne\/2018-02-04\.json: invalid JSON: /);
    expect(String(err.details?.problem)).toMatch(/JSON/);
    expect(String(err.details?.parserMessage)).toMatch(/position|end of JSON|Unterminated/i);
  });

  it('a message without ts names the file and the message index', async () => {
    const dir = smallExport();
    const file = path.join(dir, 'aleph/2018-02-07.json');
    const msgs = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>[];
    delete msgs[1]!.ts;
    writeFileSync(file, JSON.stringify(msgs));
    const err = await importFailure(() => parseSlackExport(dir));
    expect(err.details).toMatchObject({
      file: 'aleph/2018-02-07.json',
      problem: 'message #1 has no valid ts',
      index: 1,
    });
  });

  it('a day file that is not an array', async () => {
    const dir = smallExport();
    writeFileSync(path.join(dir, 'aleph/2018-02-03.json'), '{"messages": []}');
    const err = await importFailure(() => planImport(dir));
    expect(err.details).toMatchObject({
      file: 'aleph/2018-02-03.json',
      problem: 'expected an array of messages, got object',
    });
  });

  it('a missing channels.json', async () => {
    const dir = smallExport();
    rmSync(path.join(dir, 'channels.json'));
    expect(await detectFormat(dir)).toBe('platform_a_export');
    const err = await importFailure(() => planImport(dir));
    expect(err.details?.file).toBe('channels.json');
    expect(err.message).toMatch(/^channels\.json: missing/);
  });

  it.each([
    ['not an array', { private: [] }, 'expected an array of private channels, got object'],
    ['an entry without a name', [{ id: 'G1' }], 'channel #0 has no id or name'],
    ['an entry that is not an object', ['G1'], 'channel #0 has no id or name'],
    ['members that is not an array', [{ id: 'G1', name: 'aleph', members: 'U1' }], 'channel #0 has members string'],
    ['a member id that is not a string', [{ id: 'G1', name: 'aleph', members: ['U1', 7] }], 'members[1] number'],
    ['an empty member id', [{ id: 'G1', name: 'aleph', members: [''] }], 'members[0] an empty string'],
  ])('a groups.json with %s', async (_what, groups, problem) => {
    const dir = smallExport();
    writeFileSync(path.join(dir, 'groups.json'), JSON.stringify(groups));
    const err = await importFailure(() => planImport(dir));
    expect(err.details?.file).toBe('groups.json');
    expect(err.message).toMatch(/^groups\.json: /);
    expect(String(err.details?.problem)).toContain(problem);
  });

  it('a groups.json that is not JSON', async () => {
    const dir = smallExport();
    writeFileSync(path.join(dir, 'groups.json'), '[{"id": "G1",');
    const err = await importFailure(() => planImport(dir));
    expect(err.message).toMatch(/^groups\.json: invalid JSON: /);
  });

  it('the first bad file in order is the one reported', async () => {
    const dir = smallExport();
    writeFileSync(path.join(dir, 'arachne/2018-02-07.json'), '[');
    writeFileSync(path.join(dir, 'aleph/2018-02-08.json'), 'nope');
    const err = await importFailure(() => planImport(dir));
    expect(err.details?.file).toBe('aleph/2018-02-08.json');
  });
});

describe('zip archives', () => {
  const zipDir = (dir: string, prefix: string): Uint8Array => {
    const entries: Record<string, Uint8Array> = {};
    for (const f of ['channels.json', 'users.json']) entries[`${prefix}${f}`] = readFileSync(path.join(dir, f));
    for (const ch of CHANNELS) {
      for (const f of readdirSync(path.join(dir, ch))) {
        entries[`${prefix}${ch}/${f}`] = readFileSync(path.join(dir, ch, f));
      }
    }
    return zipSync(entries);
  };

  it.each(['', 'export/'])('a zip (prefix %j) plans exactly like its directory', async (prefix) => {
    const dir = smallExport();
    const zip = tmp('export.zip');
    writeFileSync(zip, zipDir(dir, prefix));
    expect(await detectFormat(zip)).toBe('platform_a_export');
    const fromDir = await planImport(dir);
    const fromZip = await planImport(zip);
    expect(fromZip.source).toBe(zip);
    expect(fromZip.filesRead).toBe(fromDir.filesRead);
    expect(fromZip.messages).toEqual(fromDir.messages);
    expect(fromZip.skipped).toEqual(fromDir.skipped);
    expect(fromZip.channels.map((c) => ({ ...c, workspaceName: '' }))).toEqual(
      fromDir.channels.map((c) => ({ ...c, workspaceName: '' })),
    );
  });

  it('a broken day file inside a zip is named relative to the export root', async () => {
    const dir = smallExport();
    writeFileSync(path.join(dir, 'aleph/2018-02-04.json'), '[{"ts": "1.0"}, {"text": "no ts"}]');
    const zip = tmp('broken.zip');
    writeFileSync(zip, zipDir(dir, 'export/'));
    const err = await importFailure(() => planImport(zip));
    expect(err.details).toMatchObject({ file: 'aleph/2018-02-04.json', problem: 'message #1 has no valid ts' });
  });

  it('a file named .zip that is not a zip', async () => {
    const zip = tmp('fake.zip');
    writeFileSync(zip, 'this is not a zip archive');
    const err = await importFailure(() => planImport(zip));
    expect(err.message).toMatch(/fake\.zip: invalid zip archive/);
  });

  it('a zip of a DiscordChatExporter file', async () => {
    const zip = tmp('dce.zip');
    writeFileSync(zip, zipSync({ 'chat.json': readFileSync(DCE) }));
    const plan = await planImport(zip);
    expect(plan.format).toBe('platform_b_export');
    expect(plan.messages).toHaveLength(518);
  });
});

describe('bad input: DiscordChatExporter and unknown formats', () => {
  it('a truncated DCE file is detected and its JSON error reported', async () => {
    const file = tmp('chat.json');
    writeFileSync(file, readFileSync(DCE, 'utf8').slice(0, 100_000));
    expect(await detectFormat(file)).toBe('platform_b_export');
    const err = await importFailure(() => planImport(file));
    expect(err.details?.file).toBe(path.basename(file));
    expect(err.message).toMatch(/invalid JSON/);
  });

  it.each([
    ['id', 'has no id'],
    ['timestamp', 'has no valid timestamp'],
  ])('a DCE message without %s', async (field, problem) => {
    const data = JSON.parse(readFileSync(DCE, 'utf8')) as { messages: Record<string, unknown>[] };
    delete data.messages[3]![field];
    const file = tmp('chat.json');
    writeFileSync(file, JSON.stringify(data));
    const err = await importFailure(() => parseDiscordExport(file));
    expect(err.details?.file).toBe(path.basename(file));
    expect(String(err.details?.problem)).toContain(`message #3`);
    expect(String(err.details?.problem)).toContain(problem);
  });

  it('an unknown-format file says what it found', async () => {
    const file = tmp('notes.txt');
    writeFileSync(file, 'hello, this is not an export');
    const err = await importFailure(() => detectFormat(file));
    expect(err.message).toMatch(/unknown format: found a file .*hello, this is not an export/);
    await importFailure(() => planImport(file));
  });

  it('an unknown-format directory lists its files', async () => {
    const dir = tmp('random');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'a.csv'), 'x,y\n1,2\n');
    writeFileSync(path.join(dir, 'b.json'), '{"hello": "world"}');
    const err = await importFailure(() => planImport(dir));
    expect(err.message).toMatch(/unknown format: found a directory with a\.csv, b\.json/);
    expect(err.details?.found).toEqual(['a.csv', 'b.json']);
  });

  it('a path that does not exist', async () => {
    const err = await importFailure(() => planImport(path.join(tmpRoot, 'nope')));
    expect(err.message).toMatch(/^nope: cannot read the import path/);
  });
});
