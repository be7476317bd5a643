import type { AskMessage } from '@atlas/stores';
import { factText } from '@atlas/wiki';
import { answerDate } from './extractive.js';
import type { AskAttachment, AskBody, AskChatMessage, AskSource } from './types.js';

/** The quality tier's prompt: instructions per mode, the earlier turns, the numbered sources, attachments. */
export function promptOf(
  body: AskBody,
  sources: readonly AskSource[],
  earlier: readonly AskMessage[],
  attachments: readonly AskAttachment[],
  acceptsImages: boolean,
): AskChatMessage[] {
  const style = {
    quick: 'Answer in one or two sentences.',
    deep: 'Answer thoroughly but concisely.',
    summarize: 'Summarise what the sources say about the question, grouped by topic.',
  }[body.mode];
  const system = [
    "You answer questions about a team's chat history using only the numbered sources given with the question.",
    'Cite every claim with the number of its source in square brackets, like [1] or [2][3]; cite only numbers that exist.',
    'If the sources do not answer the question, say so plainly.',
    style,
  ].join(' ');
  const numbered = sources
    .map(
      (s) =>
        `${s.citation.id} ${s.fact.author_name}, ${answerDate(s.fact.message_ts)}, #${s.citation.channel}: ${factText(s.fact)}`,
    )
    .join('\n');
  const docs = attachments
    .filter((a) => a.kind === 'text')
    .map((a) => `Attached file ${a.name}:\n${a.text}`)
    .join('\n\n');
  const text = `${sources.length ? `Sources:\n${numbered}` : 'Sources: none found.'}${docs ? `\n\n${docs}` : ''}\n\nQuestion: ${body.question}`;
  const images = acceptsImages ? attachments.filter((a) => a.kind === 'image') : [];
  return [
    { role: 'system', content: system },
    ...earlier.map((m) => ({ role: m.role, content: m.content })),
    {
      role: 'user',
      content: images.length
        ? [
            { type: 'text', text },
            ...images.map((a) => ({
              type: 'image_url' as const,
              image_url: { url: `data:${a.contentType};base64,${a.base64}` },
            })),
          ]
        : text,
    },
  ];
}
