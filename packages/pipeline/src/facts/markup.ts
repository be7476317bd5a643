import type { Person } from '@atlas/core';

/** Placeholder that replaces a fenced code block in clean text. */
export const CODE_PLACEHOLDER = '[code]';

/** Result of rendering platform markup: clean text plus what was pulled out of it. */
export interface RenderedMarkup {
  text: string;
  links: string[];
  codeBlocks: string[];
  inlineCode: string[];
  mentions: string[];
}

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  hellip: '…',
  ndash: '–',
  mdash: '—',
};

/** Decodes the HTML entities Slack writes (`&amp; &lt; &gt;`, a few named quotes, numeric `&#39;`). */
export const unescapeEntities = (s: string): string =>
  s.replace(/&(#x?[0-9a-f]+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith('#')) {
      const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return Number.isFinite(code) && code > 0 && code < 0x110000 ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });

const LINK_SCHEME = /^(https?|ftp|mailto|ssh|git|file):/i;
const BARE_URL = /\bhttps?:\/\/[^\s<>"'`]+[^\s<>"'`.,;:!?)\]]/g;

/** Strips a scheme and trailing slash so a Slack label can be compared with its URL. */
const bareUrl = (u: string): string => u.replace(/^[a-z]+:(\/\/)?/i, '').replace(/\/$/, '');

/** Renders one Slack/Discord angle-bracket token (`<@U1|ann>`, `<#C1|dev>`, `<!here>`, `<url|label>`, `<:e:1>`). */
const renderAngle = (
  inner: string,
  people: ReadonlyMap<string, string>,
  out: { links: string[]; mentions: string[] },
): string | null => {
  const [head = '', label] = splitLabel(inner);
  if (/^@[&!]?[A-Z0-9]+$/i.test(head)) {
    const id = head.replace(/^@[&!]?/, '');
    const name = label?.replace(/^@/, '') ?? people.get(id) ?? (head.startsWith('@&') ? 'role' : 'user');
    out.mentions.push(name);
    return `@${name}`;
  }
  if (head.startsWith('#')) return `#${label ?? 'channel'}`;
  if (head.startsWith('!')) {
    const special = head.slice(1).split('^')[0] ?? '';
    if (['here', 'channel', 'everyone'].includes(special)) return `@${special}`;
    return label ?? '';
  }
  if (/^a?:[\w~-]+:\d+$/.test(head)) return ''; // Discord custom emoji
  if (/^t:\d+(:[a-zA-Z])?$/.test(head)) return new Date(Number(head.split(':')[1]) * 1000).toISOString().slice(0, 10);
  if (LINK_SCHEME.test(head)) {
    const url = unescapeEntities(head);
    out.links.push(url);
    if (!label) return url;
    const l = unescapeEntities(label);
    const labelIsUrl = /^[\w.-]+\.[a-z]{2,}(\/\S*)?$/i.test(l) || bareUrl(url).startsWith(bareUrl(l));
    return labelIsUrl ? url : `${l} (${url})`;
  }
  return null;
};

const splitLabel = (inner: string): [string, string | undefined] => {
  const bar = inner.indexOf('|');
  return bar < 0 ? [inner, undefined] : [inner.slice(0, bar), inner.slice(bar + 1) || undefined];
};

/** Strips `*bold*`, `**bold**`, `_it_`, `__u__`, `~strike~`, `~~strike~~` and `||spoiler||`, keeping the words. */
export const stripEmphasis = (s: string): string =>
  s
    .replace(/\*\*(?=\S)([^*\n]+?)\*\*/g, '$1')
    .replace(/\|\|(?=\S)([^|\n]+?)\|\|/g, '$1')
    .replace(/(?<![\w_])__(?=\S)([^_\n]+?)__(?![\w_])/g, '$1')
    .replace(/~~(?=\S)([^~\n]+?)~~/g, '$1')
    .replace(/(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])/g, '$1')
    .replace(/(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])/g, '$1')
    .replace(/(?<![\w~])~(?=\S)([^~\n]+?)(?<=\S)~(?![\w~])/g, '$1');

/** Removes `:emoji_codes:` and pictographic emoji (with their modifiers and joiners). */
export const stripEmoji = (s: string): string =>
  s
    .replace(/(?<!\/):[a-z+][\w+'-]{1,40}:/gi, '')
    .replace(/\p{Extended_Pictographic}|\p{Emoji_Modifier}|\p{Regional_Indicator}|\uFE0F|\u200D|\u20E3/gu, '');

const PROTECT = (i: number): string => `\uE000${i}\uE001`;

/**
 * Renders Slack mrkdwn or Discord markdown to clean text (spec "Ingestion pipeline": Preprocess).
 * Fenced code becomes `[code]` (content kept in codeBlocks); inline code keeps its text without backticks
 * (also listed in inlineCode) and is shielded from every other rewrite. `people` maps platform user ids to names.
 */
export const renderMarkup = (raw: string, people: readonly Person[]): RenderedMarkup => {
  const names = new Map(people.map((p) => [p.id, p.name]));
  const out = { links: [] as string[], mentions: [] as string[] };
  const codeBlocks: string[] = [];
  const inlineCode: string[] = [];
  const shielded: string[] = [];
  const shield = (text: string): string => {
    shielded.push(text);
    return PROTECT(shielded.length - 1);
  };
  let s = raw.replace(/```(?:[a-z0-9+#-]{1,15}\n)?([\s\S]*?)(?:```|$)/gi, (_m, body: string) => {
    codeBlocks.push(unescapeEntities(body.replace(/^\n+|\s+$/g, '')));
    return `\n${shield(CODE_PLACEHOLDER)}\n`;
  });
  s = s.replace(/`([^`\n]+)`/g, (_m, body: string) => {
    const code = unescapeEntities(body.trim());
    inlineCode.push(code);
    return shield(code);
  });
  s = s.replace(/<([^<>\s][^<>]*)>/g, (whole, inner: string) => renderAngle(inner, names, out) ?? whole);
  s = unescapeEntities(s);
  s = s.replace(BARE_URL, (url) => shield(collect(out.links, url)));
  s = stripEmoji(stripEmphasis(s));
  s = s
    .split('\n')
    .map((line) =>
      line
        .replace(/^\s*(>+|-#|#{1,3})\s+/, '')
        .replace(/[ \t\u00a0]+/g, ' ')
        .trim(),
    )
    .filter((line) => line.length > 0)
    .join('\n');
  s = s.replace(/\uE000(\d+)\uE001/g, (_m, i: string) => shielded[Number(i)] ?? '');
  const mentions = [...new Set([...out.mentions, ...people.map((p) => p.name)])];
  return { text: s, links: [...new Set(out.links)], codeBlocks, inlineCode, mentions };
};

const collect = (links: string[], url: string): string => {
  links.push(url);
  return url;
};
