import type { BotReply } from './reply.js';

/** platform_b's message content limit, characters. */
export const PLATFORM_B_CONTENT_LIMIT = 2_000;

/** Escapes platform_a mrkdwn control characters (`&`, `<`, `>`). */
const escapeA = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/**
 * A reply as platform_a's slash-command response (the immediate answer or a POST to response_url): `{response_type:
 * 'ephemeral' | 'in_channel', text}` with mrkdwn escaped and each source a line `<permalink|[n] label>` under
 * "Sources:". `replace_original: false` keeps the acknowledgement.
 */
export const renderPlatformA = (reply: BotReply) => {
  const sources = reply.sources.map((s) =>
    s.url ? `<${s.url}|${escapeA(s.id === 'wiki' ? s.label : `${s.id} ${s.label}`)}>` : escapeA(`${s.id} ${s.label}`),
  );
  const text =
    escapeA(reply.text) +
    (sources.length === 0
      ? ''
      : reply.sources.length === 1 && reply.sources[0]!.id === 'wiki'
        ? `\n${sources[0]}`
        : `\n\n*Sources:*\n${sources.join('\n')}`);
  return { response_type: reply.visibility, text, replace_original: false };
};

/**
 * A reply as platform_b message content (the deferred interaction's follow-up): Markdown with each source a line
 * `[n] [label](<permalink>)` (angle brackets: no embeds), at most PLATFORM_B_CONTENT_LIMIT characters: the answer text
 * is cut first (ending in "…"), then sources that do not fit are left out. Mentions are never pinged
 * (`allowed_mentions.parse` empty); `flags: 64` makes an ephemeral reply visible to its user only.
 */
export const renderPlatformB = (reply: BotReply) => {
  const lines = reply.sources.map((s) =>
    s.url ? `${s.id === 'wiki' ? '' : `${s.id} `}[${s.label}](<${s.url}>)` : `${s.id} ${s.label}`,
  );
  const isWiki = reply.sources.length === 1 && reply.sources[0]!.id === 'wiki';
  const header = lines.length === 0 ? '' : isWiki ? '\n' : '\n\n**Sources:**\n';
  let footer = lines.length === 0 ? '' : header + lines.join('\n');
  while (footer.length > PLATFORM_B_CONTENT_LIMIT / 2 && lines.length > 0) {
    lines.pop();
    footer = lines.length === 0 ? '' : header + lines.join('\n');
  }
  const room = PLATFORM_B_CONTENT_LIMIT - footer.length;
  const text = reply.text.length > room ? `${reply.text.slice(0, room - 1)}…` : reply.text;
  return {
    content: text + footer,
    allowed_mentions: { parse: [] as string[] },
    ...(reply.visibility === 'ephemeral' ? { flags: 64 } : {}),
  };
};
