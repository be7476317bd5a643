import { type MessageIngested, PLATFORM_A_SYSTEM_SUBTYPES } from '@atlas/core';
import type { ThreadContext } from './port.js';

/** How long after a question a message of another author in the channel's flow is taken as its answer. */
export const ANSWER_WINDOW_MS = 15 * 60 * 1000;

/** A question mark that ends a sentence (not one inside a URL's query string). */
const ASKS = /\?+(?=[\s"'”’)\]]|$)/;

/** A channel-flow message as the facts projector keeps it: id, time (ISO 8601), preprocessed text, author name. */
export interface FlowMessage {
  messageId: string;
  messageTs: string;
  text: string;
  authorName: string;
}

/**
 * The question `m` answers (ExtractionInput.answers): `before`, the channel-flow message just before it, when `m` is a
 * top-level message (not a Slack thread reply, not a system message) and `before` is another author's, asks something
 * (a sentence-ending `?`) and came at most ANSWER_WINDOW_MS earlier; else null. Pure. A channel without threads
 * (LoCoMo, many community channels) answers in the next message: "They offer yoga, kickboxing and circuit training."
 * says what it says only after "Do they offer a variety of classes?".
 */
export const answeredQuestion = (m: MessageIngested, before: FlowMessage | undefined): ThreadContext | null => {
  const threadReply = m.threadTs !== null && m.threadTs !== m.platformMessageId;
  const system = m.subtype !== null && PLATFORM_A_SYSTEM_SUBTYPES.has(m.subtype);
  if (threadReply || system || !m.text.trim() || before === undefined) return null;
  if (before.authorName === m.author.name || !ASKS.test(before.text)) return null;
  if (Date.parse(m.timestamp) - Date.parse(before.messageTs) > ANSWER_WINDOW_MS) return null;
  return { rootText: before.text, rootAuthorName: before.authorName, rootId: before.messageId };
};
