/** One source of an answer, as the bot shows it: the citation id (`[1]`), a label and its permalink (or null). */
export interface ReplySource {
  id: string;
  label: string;
  url: string | null;
}

/**
 * What a command answers, before it is shaped for a platform (render.ts): the text (Markdown-ish: `*bold*` is not
 * used, links are given as sources), its sources, and whether the channel sees it (`in_channel`) or only the user
 * who typed the command (`ephemeral`).
 */
export interface BotReply {
  text: string;
  sources: ReplySource[];
  visibility: 'ephemeral' | 'in_channel';
}

/** A reply only the user sees, with no sources. */
export const ephemeral = (text: string): BotReply => ({ text, sources: [], visibility: 'ephemeral' });
