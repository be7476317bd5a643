/**
 * The bot's commands (spec "What the service does" 9 "Bot"): `/atlas ask <question>` (ask about the server),
 * `/atlas sync` (sync the current channel), `/atlas wiki` (a link to the wiki of this channel), and `/atlas digest`
 * (issue 27 point 4: the channel's digest of the last 7 days, docs/digests.md). Anything else,
 * including `help` and an empty command, is answered with HELP_TEXT at once.
 */
export type BotCommand =
  | { kind: 'ask'; question: string }
  | { kind: 'sync' }
  | { kind: 'wiki' }
  | { kind: 'digest' }
  | { kind: 'help' };

/** The most characters of a question the bot sends on (the rest is cut). */
export const MAX_QUESTION_CHARS = 2_000;

/** What the bot answers every command with while its cache/queue store is down (spec: "chat bot offline"). */
export const OFFLINE_TEXT =
  'Atlas bot is temporarily offline (its cache/queue store is unreachable). Please try again in a minute; search and the wiki still work in Atlas itself.';

/** The help text: the three commands and what they do. */
export const HELP_TEXT = [
  'Atlas commands:',
  '• `/atlas ask <question>`: ask about what was said on this server, answered with sources',
  '• `/atlas sync`: sync this channel into Atlas now',
  '• `/atlas wiki`: a link to the wiki of this channel',
  '• `/atlas digest`: what changed here in the last 7 days (decisions, action items, topics), with sources',
].join('\n');

/** Parses platform_a's `text` (`ask <question>` | `sync` | `wiki`; the first word case-insensitive). */
export const parseCommandText = (text: string): BotCommand => {
  const trimmed = text.trim();
  const [word = '', ...rest] = trimmed.split(/\s+/);
  const arg = trimmed.slice(word.length).trim();
  switch (word.toLowerCase()) {
    case 'ask':
      return arg ? { kind: 'ask', question: arg.slice(0, MAX_QUESTION_CHARS) } : { kind: 'help' };
    case 'sync':
      return rest.length === 0 ? { kind: 'sync' } : { kind: 'help' };
    case 'wiki':
      return rest.length === 0 ? { kind: 'wiki' } : { kind: 'help' };
    case 'digest':
      return rest.length === 0 ? { kind: 'digest' } : { kind: 'help' };
    default:
      return { kind: 'help' };
  }
};

/** A platform_b application command option (subcommands carry their own options). */
export interface InteractionOption {
  name: string;
  type?: number;
  value?: unknown;
  options?: InteractionOption[];
}

/**
 * Parses platform_b's application command `atlas` with the subcommands `ask` (string option `question`), `sync` and
 * `wiki`. Another command name or subcommand, or an ask without a question, is help.
 */
export const parseInteractionCommand = (data: { name?: unknown; options?: InteractionOption[] }): BotCommand => {
  if (data.name !== 'atlas') return { kind: 'help' };
  const sub = data.options?.[0];
  if (sub?.name === 'sync') return { kind: 'sync' };
  if (sub?.name === 'wiki') return { kind: 'wiki' };
  if (sub?.name === 'digest') return { kind: 'digest' };
  if (sub?.name === 'ask') {
    const q = sub.options?.find((o) => o.name === 'question')?.value;
    return typeof q === 'string' && q.trim()
      ? { kind: 'ask', question: q.trim().slice(0, MAX_QUESTION_CHARS) }
      : { kind: 'help' };
  }
  return { kind: 'help' };
};
