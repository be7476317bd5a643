import type { LlmChain, LlmMessage, LlmUsage } from '@atlas/providers';
import { z } from 'zod';
import { type AskRoute, classifyQuestion } from './router.js';
import type { AskChatMessage, AskLlm } from './types.js';

/** The fast tier's answer when asked for a route (structured output, validated). */
const RouteAnswer = z.object({ route: z.enum(['semantic', 'graph', 'both']) });

const ROUTER_PROMPT = [
  'You route questions about a team chat knowledge base. Answer with JSON {"route": "semantic" | "graph" | "both"}.',
  '"graph": the question asks who did, decided, owns, leads or belongs to something, or how people, projects,',
  'teams, technologies, meetings and decisions relate. "semantic": it asks what was said, how to do something,',
  'why, or when. "both": it needs relationships and content.',
].join(' ');

/**
 * An LLM chain (packages/providers LlmChain: primary → secondary, each behind its circuit breaker) as the ask
 * engine's AskLlm: `stream` passes the deltas through and keeps the usage of the `done` event; the chain throwing
 * LlmUnavailableError before any delta, or LlmStreamInterruptedError mid-stream, reaches the engine, which applies
 * the tier's last resort (spec "LLM fallback chain": raw retrieved results). `route` asks the chain for a
 * RouteAnswer (zod-validated JSON, one repair retry in the provider); it throws when the chain is unavailable and
 * the engine falls back to the regex classifier.
 */
export function askLlmOf(chain: LlmChain): AskLlm {
  return {
    get acceptsImages() {
      return chain.acceptsImages;
    },
    stream(messages: AskChatMessage[], opts: { signal?: AbortSignal; maxTokens?: number }) {
      let usage: LlmUsage | null = null;
      const deltas = (async function* () {
        for await (const e of chain.stream({
          messages: messages as LlmMessage[],
          ...(opts.signal ? { signal: opts.signal } : {}),
          ...(opts.maxTokens ? { maxTokens: opts.maxTokens } : {}),
        })) {
          if (e.type === 'delta') yield e.text;
          else usage = e.usage;
        }
      })();
      return Object.assign(deltas, {
        usage: () =>
          usage ? { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens } : null,
      });
    },
    async route(question: string, opts: { signal?: AbortSignal }): Promise<AskRoute> {
      const r = await chain.json(
        RouteAnswer,
        [
          { role: 'system', content: ROUTER_PROMPT },
          { role: 'user', content: `Question: ${question}\nThe regex classifier says: ${classifyQuestion(question)}.` },
        ],
        opts.signal ? { signal: opts.signal } : {},
      );
      return r.value.route;
    },
  };
}
