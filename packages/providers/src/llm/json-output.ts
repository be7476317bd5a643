import { z } from 'zod';
import type { LlmMessage } from './port.js';

/** The instruction every structured request carries, whether or not the server takes response_format. */
export const JSON_INSTRUCTION = 'Answer with one JSON object only: no prose, no code fences.';

/**
 * The messages of a structured request: JSON_INSTRUCTION appended to the first system message, or a system message
 * holding it put first when there is none.
 */
export const withJsonInstruction = (messages: readonly LlmMessage[]): LlmMessage[] => {
  const [first, ...rest] = messages;
  if (first?.role === 'system' && typeof first.content === 'string') {
    return [{ role: 'system', content: `${first.content}\n\n${JSON_INSTRUCTION}` }, ...rest];
  }
  return [{ role: 'system', content: JSON_INSTRUCTION }, ...messages];
};

/** The JSON text of an answer: code fences and any prose around the outermost object or array removed. */
export const jsonText = (answer: string): string => {
  const fenced = answer.match(/```(?:json)?\s*([\s\S]*?)```/i);
  const body = (fenced?.[1] ?? answer).trim();
  const start = body.search(/[{[]/);
  if (start < 0) return body;
  const close = body[start] === '{' ? '}' : ']';
  const end = body.lastIndexOf(close);
  return end > start ? body.slice(start, end + 1) : body.slice(start);
};

/** `answer` parsed and validated: `{ok: true, value}`, or `{ok: false, problem}` naming what is wrong (for a repair). */
export const parseJsonAnswer = <T>(
  schema: z.ZodType<T>,
  answer: string,
): { ok: true; value: T } | { ok: false; problem: string } => {
  let data: unknown;
  try {
    data = JSON.parse(jsonText(answer));
  } catch (err) {
    return { ok: false, problem: `not valid JSON (${err instanceof Error ? err.message : String(err)})` };
  }
  const parsed = schema.safeParse(data);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, problem: `JSON does not match the schema:\n${z.prettifyError(parsed.error)}` };
};

/** The two messages of the one repair call: the bad answer, then what was wrong and the request to correct it. */
export const repairMessages = (badAnswer: string, problem: string): LlmMessage[] => [
  { role: 'assistant', content: badAnswer },
  {
    role: 'user',
    content: `Your answer was ${problem}\nAnswer again with the corrected JSON object only: no prose, no code fences.`,
  },
];
