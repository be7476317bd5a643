import { AtlasError, type Fact, FactType, factUuid, Importance, PLATFORM_A_SYSTEM_SUBTYPES } from '@atlas/core';
import { z } from 'zod';
import { CODE_PLACEHOLDER } from './markup.js';
import { OfflineFactExtractor, stripFileShare } from './offline-extractor.js';
import { type ExtractionInput, type FactExtractor, type JsonLlm, type LlmChatMessage, onlyMalformed } from './port.js';
import { preprocess, summarizeThreadContext, truncate } from './preprocess.js';

/** A chat message as the LLM chain takes it (port.ts LlmChatMessage). */
export type FactLlmMessage = LlmChatMessage;

/** The fast tier of an LLM chain, as the fact extractor uses it (port.ts JsonLlm). */
export type FactLlm = JsonLlm;

export interface LlmFactExtractorOptions {
  /** The fast LLM tier (LlmChain of packages/providers, or anything with its `json`). */
  llm: FactLlm;
  /** The primary fast model's name, recorded in the extractor id (`llm-facts:<model>`). */
  model: string;
}

/** What the extractor did so far (read by tests and metrics; the extractor never logs). */
export interface LlmFactExtractorStats {
  /** Messages sent to the model (a repair is not counted twice here; the chain's usage ledger counts calls). */
  messages: number;
  /** Messages answered by the model only after a repair call. */
  repaired: number;
  /** Messages whose answers stayed invalid after the repair: the regex fast path's facts were returned. */
  fastPath: number;
  /** Messages the model could not be asked about (every provider down): thrown for the dead-letter queue. */
  unavailable: number;
}

/** At most this many facts per message from the model (the offline extractor keeps 2). */
export const LLM_MAX_FACTS_PER_MESSAGE = 5;
/** Characters of a message (and of its thread context) put in the prompt. */
export const LLM_MESSAGE_CHARS = 2_000;
const CONTEXT_CHARS = 400;

const caseInsensitive = <T extends string>(values: readonly T[]) =>
  z.preprocess(
    (v) =>
      typeof v === 'string'
        ? (values.find(
            (x) =>
              x.toLowerCase() ===
              v
                .trim()
                .toLowerCase()
                .replace(/[\s-]+/g, '_'),
          ) ?? v)
        : v,
    z.enum(values as [T, ...T[]]),
  );
const score = z.preprocess((v) => (typeof v === 'string' ? Number(v) : v), z.number().finite()).catch(0.5);
const tags = z
  .array(z.string())
  .default([])
  .catch([])
  .transform((xs) => [...new Set(xs.map((x) => x.trim()).filter((x) => x.length > 0 && x.length <= 80))]);

/** The answer the prompt asks for (zod). */
export const LlmFactAnswer = z.object({
  facts: z.array(
    z.object({
      text: z.string().trim().min(1).max(1_000),
      type: caseInsensitive(FactType.options),
      importance: caseInsensitive(Importance.options).catch('medium'),
      quality: score.default(0.6),
      topics: tags,
      entities: tags,
      actions: tags,
    }),
  ),
});
export type LlmFactAnswer = z.infer<typeof LlmFactAnswer>;

const SYSTEM_PROMPT = `You turn one chat message into atomic facts for a team's knowledge base.
A fact is one self-contained statement a teammate could rely on later, written in the third person with the author's name instead of "I"/"we" where it matters (e.g. "alice decided to use Postgres for the event log"). Resolve pronouns from the thread context or the question the message answers ("answers"); keep code identifiers, versions, numbers, dates and links exact. Do not add anything the message does not say.
Skip greetings, thanks, jokes, reactions, and messages with nothing factual: then answer {"facts":[]}.
For each fact:
- type: decision (something agreed or chosen), action_item (someone will do something; name the owner and deadline when stated), question (something asked and not answered in the message), opinion (a judgement or preference), observation (anything else factual).
- importance: high (decisions, commitments, incidents, architecture), medium (useful technical detail), low (minor).
- quality in [0, 1]: 0.8-1.0 decisions, concrete action items and specific technical details; 0.5-0.8 opinions, observations, context; below 0.5 general or ambiguous statements.
- topics: 1 to 4 short lowercase topic tags (e.g. "deployment", "core.async").
- entities: names of people, technologies, projects, teams or meetings the fact mentions, as written.
- actions: for an action_item, its verb, owner and deadline (e.g. ["migrate", "bob", "friday"]); else [].
At most ${LLM_MAX_FACTS_PER_MESSAGE} facts, most important first. Answer with one JSON object only:
{"facts":[{"text":"","type":"observation","importance":"medium","quality":0.7,"topics":[],"entities":[],"actions":[]}]}`;

/**
 * Fact extraction by the fast LLM tier (id `llm-facts:<model>`; port FactExtractor), through the LLM chain (spec
 * "LLM fallback chain": the fast tier's primary model, then the secondary provider's small model, each behind its
 * circuit breaker). One JSON request per message (temperature 0) validated with zod (LlmFactAnswer); an invalid
 * answer gets ONE repair call per provider (the chain's). When the providers answered but none validly, the regex fast
 * path (OfflineFactExtractor) extracts that message instead and `stats.fastPath` counts it.
 *
 * Mapping: each fact's id is factUuid(messageId, text) (deterministic: a redelivered message gives the same ids when
 * the model answers the same); quality is clamped to [0, 1]; author, time, thread, permalink and language come from
 * the message, thread_context_summary from summarizeThreadContext; at most LLM_MAX_FACTS_PER_MESSAGE facts, duplicates
 * dropped. The caller keeps those ≥ QUALITY_THRESHOLD (selectFacts). System messages and empty text give [] without a
 * call.
 *
 * Errors (spec "Ingestion pipeline": fact extraction is required; when it fails "the message goes to a dead-letter
 * queue; processing of that message stops"; "Per agent last resorts: fact extractor uses the dead-letter queue"):
 * when no provider could answer (network failure, timeout, an error status, every breaker open) it throws AtlasError
 * PROVIDER_UNAVAILABLE, NOT retriable, with details `{dead_letter: 'at_once', dependency: 'llm_provider'}`: the
 * projector runner dead-letters the message at once and goes on with the next one (runner.ts), and the LLM recovery
 * re-drive (services/projectors llm-recovery.ts) appends it again once the model answers.
 */
export class LlmFactExtractor implements FactExtractor {
  readonly id: string;
  readonly stats: LlmFactExtractorStats = { messages: 0, repaired: 0, fastPath: 0, unavailable: 0 };
  private readonly fastPath = new OfflineFactExtractor();

  constructor(private readonly opts: LlmFactExtractorOptions) {
    this.id = `llm-facts:${opts.model}`;
  }

  async extract(input: ExtractionInput): Promise<Fact[]> {
    const { message } = input;
    if (message.subtype && PLATFORM_A_SYSTEM_SUBTYPES.has(message.subtype)) return [];
    const prompt = this.prompt(input);
    if (prompt === null) return [];
    this.stats.messages++;
    let answer: { value: LlmFactAnswer; repaired: boolean };
    try {
      answer = await this.opts.llm.json(
        LlmFactAnswer,
        [
          { role: 'system', content: SYSTEM_PROMPT },
          { role: 'user', content: prompt },
        ],
        { temperature: 0 },
      );
    } catch (err) {
      if (onlyMalformed(err)) {
        this.stats.fastPath++;
        return this.fastPath.extractSync(input);
      }
      this.stats.unavailable++;
      throw new AtlasError(
        'PROVIDER_UNAVAILABLE',
        `fact extraction unavailable (LLM provider): ${err instanceof Error ? err.message : String(err)}`,
        { retriable: false, cause: err, details: { dead_letter: 'at_once', dependency: 'llm_provider' } },
      );
    }
    if (answer.repaired) this.stats.repaired++;
    return toFacts(answer.value, input);
  }

  /**
   * The user message: channel, author, time, thread context or the question answered, and the message text; null when
   * it has no text.
   */
  private prompt({ message, thread, answers = null }: ExtractionInput): string | null {
    const pre = preprocess({ ...message, text: stripFileShare(message.text) });
    let code = 0;
    const text = pre.text.replaceAll(CODE_PLACEHOLDER, () => `\`\`\`${pre.codeBlocks[code++] ?? ''}\`\`\``).trim();
    if (!text) return null;
    const isReply = thread !== null && thread.rootId !== message.platformMessageId;
    return JSON.stringify({
      channel: message.channelName,
      author: message.author.name,
      time: message.timestamp,
      ...(isReply ? { thread: { author: thread.rootAuthorName, text: truncate(thread.rootText, CONTEXT_CHARS) } } : {}),
      ...(!isReply && answers
        ? { answers: { author: answers.rootAuthorName, text: truncate(answers.rootText, CONTEXT_CHARS) } }
        : {}),
      ...(pre.mentions.length ? { mentions: pre.mentions } : {}),
      message: truncate(text, LLM_MESSAGE_CHARS),
    });
  }
}

/** Maps a validated answer to the message's facts (pure; see LlmFactExtractor for the rules). Exported for tests. */
export const toFacts = (answer: LlmFactAnswer, { message, thread }: ExtractionInput): Fact[] => {
  const lang = preprocess(message).lang;
  const seen = new Set<string>();
  const out: Fact[] = [];
  for (const f of answer.facts) {
    const memoryText = f.text.replace(/\s+/g, ' ').trim();
    const key = memoryText.toLowerCase();
    if (!memoryText || seen.has(key)) continue;
    seen.add(key);
    out.push({
      factId: factUuid(message.messageId, memoryText),
      memoryText,
      factType: f.type,
      importance: f.importance,
      qualityScore: Math.round(Math.min(1, Math.max(0, f.quality)) * 1000) / 1000,
      topicTags: [...new Set(f.topics.map((t) => t.toLowerCase()))].slice(0, 4),
      entityTags: f.entities,
      actionTags: f.type === 'action_item' ? f.actions.map((a) => a.toLowerCase()) : [],
      authorId: message.author.id,
      authorName: message.author.name,
      messageTs: message.timestamp,
      threadTs: message.threadTs,
      permalink: message.permalink,
      threadContextSummary: summarizeThreadContext(thread, message),
      validAt: message.timestamp,
      sourceLang: lang,
    });
    if (out.length >= LLM_MAX_FACTS_PER_MESSAGE) break;
  }
  return out;
};
