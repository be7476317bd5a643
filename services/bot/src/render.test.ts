import { describe, expect, it } from 'vitest';
import { parseCommandText, parseInteractionCommand } from './commands.js';
import { PLATFORM_B_CONTENT_LIMIT, renderPlatformA, renderPlatformB } from './render.js';

const sources = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    id: `[${i + 1}]`,
    label: `alice, #general, 2024-01-0${(i % 9) + 1}`,
    url: `https://acme.slack.com/archives/C1/p17000000${String(i).padStart(2, '0')}000100`,
  }));

describe('commands', () => {
  it('platform_a text: ask with a question, sync, wiki; anything else (or ask without a question) is help', () => {
    expect(parseCommandText('ask  Who owns   Kafka? ')).toEqual({ kind: 'ask', question: 'Who owns   Kafka?' });
    expect(parseCommandText('ASK x')).toEqual({ kind: 'ask', question: 'x' });
    expect(parseCommandText('sync')).toEqual({ kind: 'sync' });
    expect(parseCommandText(' wiki ')).toEqual({ kind: 'wiki' });
    expect(parseCommandText('Digest')).toEqual({ kind: 'digest' });
    for (const t of ['', 'ask', 'sync now', 'wiki please', 'digest today', 'dance'])
      expect(parseCommandText(t)).toEqual({ kind: 'help' });
    expect(parseCommandText(`ask ${'q'.repeat(5_000)}`)).toMatchObject({ question: 'q'.repeat(2_000) });
  });

  it('platform_b: the atlas command with its subcommands', () => {
    const ask = { name: 'ask', options: [{ name: 'question', value: ' why? ' }] };
    expect(parseInteractionCommand({ name: 'atlas', options: [ask] })).toEqual({ kind: 'ask', question: 'why?' });
    expect(parseInteractionCommand({ name: 'atlas', options: [{ name: 'sync' }] })).toEqual({ kind: 'sync' });
    expect(parseInteractionCommand({ name: 'atlas', options: [{ name: 'wiki' }] })).toEqual({ kind: 'wiki' });
    expect(parseInteractionCommand({ name: 'atlas', options: [{ name: 'digest' }] })).toEqual({ kind: 'digest' });
    expect(parseInteractionCommand({ name: 'other', options: [{ name: 'sync' }] })).toEqual({ kind: 'help' });
    expect(parseInteractionCommand({ name: 'atlas', options: [{ name: 'ask', options: [] }] })).toEqual({
      kind: 'help',
    });
  });
});

describe('render', () => {
  it('platform_a: mrkdwn escaped, sources as <url|[n] label> lines', () => {
    const out = renderPlatformA({ text: 'a < b & c > d [1]', sources: sources(1), visibility: 'in_channel' });
    expect(out).toEqual({
      response_type: 'in_channel',
      replace_original: false,
      text: `a &lt; b &amp; c &gt; d [1]\n\n*Sources:*\n<${sources(1)[0]!.url}|[1] alice, #general, 2024-01-01>`,
    });
  });

  it(`platform_b: at most ${PLATFORM_B_CONTENT_LIMIT} characters: a long answer is cut with "…", sources kept while they fit`, () => {
    const long = renderPlatformB({ text: 'word '.repeat(1_000), sources: sources(3), visibility: 'in_channel' });
    expect(long.content.length).toBeLessThanOrEqual(PLATFORM_B_CONTENT_LIMIT);
    expect(long.content).toContain('…\n\n**Sources:**\n[1] [alice, #general, 2024-01-01](<https://');
    expect(long.content).toContain('[3] [');
    expect(long).not.toHaveProperty('flags');
    const many = renderPlatformB({ text: 'short', sources: sources(40), visibility: 'ephemeral' });
    expect(many.content.length).toBeLessThanOrEqual(PLATFORM_B_CONTENT_LIMIT);
    expect(many.content.startsWith('short\n\n**Sources:**\n[1] ')).toBe(true);
    expect(many.content).not.toContain('[40]');
    expect(many.flags).toBe(64);
  });
});
