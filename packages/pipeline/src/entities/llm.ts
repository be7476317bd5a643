import {
  AtlasError,
  EntityType,
  type ExtractedEntity,
  type ExtractedRelationship,
  entityUuid,
  type Fact,
  normalizeEntityName,
  RelationshipType,
} from '@atlas/core';
import { z } from 'zod';
import { type JsonLlm, type LlmChatMessage, onlyMalformed } from '../facts/port.js';
import {
  CONTEXT_MAX,
  clip,
  DECISION_NAME_MAX,
  decisionParts,
  factBody,
  findKnownPerson,
  isoDate,
  OfflineEntityExtractor,
  technologyName,
} from './offline/index.js';
import { findOwnerChanges, type KnownOwner, ownershipOf } from './ownership.js';
import type { EntityExtraction, EntityExtractionInput, EntityExtractor, KnownDecision, KnownPerson } from './port.js';
import { findSupersessions, type NewDecision } from './supersede.js';

/** A chat message as the LLM chain takes it (port.ts LlmChatMessage). */
export type EntityLlmMessage = LlmChatMessage;

/** The fast tier of an LLM chain, as the entity extractor uses it (port.ts JsonLlm). */
export type EntityLlm = JsonLlm;

export interface LlmEntityExtractorOptions {
  /** The fast LLM tier (LlmChain of packages/providers, or anything with its `json`). */
  llm: EntityLlm;
  /** The primary fast model's name, recorded in the extractor id (`llm-entities:<model>`). */
  model: string;
  /** At most this many known people are listed in the prompt (default 40; those the facts name come first). */
  maxPeopleInPrompt?: number | undefined;
}

/** What the extractor did so far (read by health and tests; the extractor never logs). */
export interface LlmExtractorStats {
  /** Chat completions requested (a repair counts as one more). */
  calls: number;
  /** Answers that were not valid JSON of the expected shape, so a repair was asked for. */
  repairs: number;
  /** Messages whose answer was still invalid after the repair: the offline extractor's result was returned. */
  fallbacks: number;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const PERSON_PAIR_TYPES = new Set(['RELATED_TO', 'DECIDED_BY', 'PARTICIPATED_IN', 'WORKS_ON', 'MEMBER_OF', 'USES']);

/** Relationship directions (spec "Relationship"): [source type, target type]; RELATED_TO takes any. */
const DIRECTION: Record<string, [EntityType, EntityType]> = {
  DECIDED_BY: ['Person', 'Decision'],
  PARTICIPATED_IN: ['Person', 'Meeting'],
  WORKS_ON: ['Person', 'Project'],
  USES: ['Project', 'Technology'],
  MEMBER_OF: ['Person', 'Team'],
};

const caseInsensitive = <T extends string>(values: readonly T[]) =>
  z.preprocess(
    (v) => (typeof v === 'string' ? (values.find((x) => x.toLowerCase() === v.trim().toLowerCase()) ?? v) : v),
    z.enum(values as [T, ...T[]]),
  );

const confidence = z.preprocess((v) => (typeof v === 'string' ? Number(v) : v), z.number().finite()).catch(0.6);
const optionalText = z
  .union([z.string(), z.null()])
  .optional()
  .transform((v) => v ?? null);

/** The answer the prompt asks for (zod; names are matched to entities afterwards). */
export const LlmAnswer = z.object({
  entities: z.array(
    z.object({
      name: z.string().trim().min(1).max(200),
      type: caseInsensitive(EntityType.options),
      aliases: z.array(z.string()).default([]),
      confidence: confidence.default(0.7),
      properties: z
        .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
        .default({})
        .catch({}),
      fact: optionalText,
    }),
  ),
  relationships: z
    .array(
      z.object({
        type: caseInsensitive(RelationshipType.options),
        source: z.string().trim().min(1),
        target: z.string().trim().min(1),
        confidence: confidence.default(0.6),
        context: optionalText,
        valid_from: optionalText,
        valid_until: optionalText,
        fact: optionalText,
      }),
    )
    .default([]),
});
export type LlmAnswer = z.infer<typeof LlmAnswer>;

const SYSTEM_PROMPT = `You extract a knowledge graph from the facts of one chat message.
Entity types: Person, Decision, Project, Technology, Team, Meeting.
- Person: people named in the facts (the authors, mentioned users, other named people). Use the known people's display names when a fact refers to one of them by handle or alias.
- Technology: languages, libraries, frameworks, databases, tools, platforms. Project: a named product, repository, library or effort someone works on. Team: a named group of people. Meeting: a standup, retro, sync, call, meetup, conference (keep names like "Clojure/West"; a generic one is its kind plus a day, e.g. "Monday standup").
- Decision: one per decision stated; its name is the decision as a short imperative or noun phrase (at most 80 characters), e.g. "Use Postgres for the event log"; properties: decided_by, status (agreed, implemented or proposed).
Relationship types and directions: DECIDED_BY (Person -> Decision), PARTICIPATED_IN (Person -> Meeting), WORKS_ON (Person -> Project), USES (Project -> Technology), MEMBER_OF (Person -> Team), RELATED_TO (any -> any, never Person -> Person).
Confidence in [0, 1]: 0.8-1.0 explicit statement, 0.5-0.8 strong implication, below 0.5 weak.
Dates are YYYY-MM-DD; valid_from is the message date unless the text says otherwise; valid_until is null unless the text states an end.
"fact" is the id (f1, f2, ...) of the fact an entity or relationship comes from.
Answer with one JSON object only:
{"entities":[{"name":"","type":"","aliases":[],"confidence":0.9,"properties":{},"fact":"f1"}],"relationships":[{"type":"","source":"","target":"","confidence":0.9,"context":"","valid_from":"YYYY-MM-DD","valid_until":null,"fact":"f1"}]}
Only use names that appear in the facts. Do not invent entities.`;

/** The stripped JSON text of an answer: code fences and text around the outermost object removed. */
const jsonText = (answer: string): string => {
  const t = answer.replace(/^\s*```(?:json)?\s*|\s*```\s*$/g, '').trim();
  const start = t.indexOf('{');
  const end = t.lastIndexOf('}');
  return start >= 0 && end > start ? t.slice(start, end + 1) : t;
};

/** Parses and validates an answer; the error says what is wrong (sent back in the repair request). */
export const parseLlmAnswer = (answer: string): { ok: true; value: LlmAnswer } | { ok: false; error: string } => {
  let raw: unknown;
  try {
    raw = JSON.parse(jsonText(answer));
  } catch (err) {
    return { ok: false, error: `not valid JSON (${err instanceof Error ? err.message : String(err)})` };
  }
  const parsed = LlmAnswer.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = parsed.error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
  return { ok: false, error: `JSON does not match the schema (${issues})` };
};

/**
 * Entity extraction by the fast LLM tier (id `llm-entities:<model>`; port EntityExtractor), through the LLM chain
 * (packages/providers LlmChain: primary, then the secondary provider, each behind its circuit breaker; spec "LLM
 * fallback chain"). One JSON request per message (json_object, temperature 0) validated with zod (LlmAnswer); an
 * invalid answer gets ONE repair call per provider (the chain's). When every provider answered but none validly, the
 * offline extractor's result is returned for that message and `stats.fallbacks` counts it.
 *
 * Mapping (spec "Graph entity", "Relationship", "Decision record"): ids are entityUuid(channelId, type, name);
 * people resolve to the known display names, technologies to the TECH lexicon's names; confidences are clamped to
 * [0, 1]; relationships whose ends are not entities, Person–Person pairs and duplicates are dropped, reversed
 * directions are turned round; every fact's author is a Person (0.95). Decisions get the offline properties
 * (decided_by, date, status, context) and supersessions come from findSupersessions.
 *
 * Errors: AtlasError PROVIDER_UNAVAILABLE (retriable) when no provider could answer (network failure, timeout, an
 * error status, breakers open), so the caller queues the message for entity backfill (spec: the entity extractor's
 * last resort is to be skipped; facts are still stored).
 */
export class LlmEntityExtractor implements EntityExtractor {
  readonly id: string;
  readonly stats: LlmExtractorStats = { calls: 0, repairs: 0, fallbacks: 0 };
  private readonly offline = new OfflineEntityExtractor();

  constructor(private readonly opts: LlmEntityExtractorOptions) {
    this.id = `llm-entities:${opts.model}`;
  }

  async extract(input: EntityExtractionInput): Promise<EntityExtraction> {
    if (input.facts.facts.length === 0)
      return { entities: [], relationships: [], supersessions: [], people: [], decisions: [] };
    const messages: EntityLlmMessage[] = [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: this.prompt(input) },
    ];
    let answer: { value: LlmAnswer; repaired: boolean };
    try {
      answer = await this.opts.llm.json(LlmAnswer, messages, { temperature: 0 });
    } catch (err) {
      if (onlyMalformed(err)) {
        this.stats.calls += 2;
        this.stats.repairs++;
        this.stats.fallbacks++;
        return this.offline.extractSync(input);
      }
      this.stats.calls++;
      if (err instanceof AtlasError && err.code === 'PROVIDER_UNAVAILABLE') throw err;
      throw new AtlasError(
        'PROVIDER_UNAVAILABLE',
        `entity extraction unavailable: ${err instanceof Error ? err.message : String(err)}`,
        { retriable: true, cause: err },
      );
    }
    this.stats.calls += answer.repaired ? 2 : 1;
    if (answer.repaired) this.stats.repairs++;
    return toExtraction(answer.value, input);
  }

  /** The user message: the message date, its facts (ids f1, f2, …) and the known people the prompt can hold. */
  private prompt(input: EntityExtractionInput): string {
    const { facts } = input.facts;
    const text = facts
      .map((f) => f.memoryText)
      .join(' ')
      .toLowerCase();
    const max = this.opts.maxPeopleInPrompt ?? 40;
    const named = (p: KnownPerson): boolean =>
      [p.name, ...p.aliases].some((n) => n.length >= 2 && text.includes(n.toLowerCase()));
    const people = [...input.people.filter(named), ...input.people.filter((p) => !named(p))].slice(0, max);
    return JSON.stringify({
      message_date: isoDate(facts[0]!.messageTs),
      facts: facts.map((f, i) => ({
        id: `f${i + 1}`,
        author: f.authorName,
        type: f.factType,
        text: f.memoryText,
        entity_tags: f.entityTags,
        topic_tags: f.topicTags,
      })),
      known_people: people.map((p) => ({ name: p.name, aliases: p.aliases })),
    });
  }
}

/**
 * Maps a validated answer to the port's EntityExtraction for the message in `input` (pure; see LlmEntityExtractor
 * for the rules). Exported for tests.
 */
export const toExtraction = (answer: LlmAnswer, input: EntityExtractionInput): EntityExtraction => {
  const { channelId, facts } = input.facts;
  const messageDate = isoDate(facts[0]!.messageTs);
  const entities = new Map<string, ExtractedEntity>();
  const byName = new Map<string, ExtractedEntity[]>();
  const newPeople = new Map<string, KnownPerson>();
  const factOf = (ref: string | null, ...names: string[]): Fact => {
    const m = ref?.match(/^f?(\d+)$/i);
    const byIndex = m ? facts[Number(m[1]) - 1] : undefined;
    const byId = ref ? facts.find((f) => f.factId === ref) : undefined;
    const lower = names.map((n) => n.toLowerCase());
    const byText = facts.find((f) => lower.every((n) => f.memoryText.toLowerCase().includes(n)));
    return byIndex ?? byId ?? byText ?? facts[0]!;
  };

  const add = (
    type: EntityType,
    rawName: string,
    conf: number,
    factId: string,
    aliases: readonly string[],
    properties: Record<string, string>,
  ): ExtractedEntity | null => {
    let name = rawName.trim();
    const spellings = [...aliases];
    if (type === 'Person') {
      const known = findKnownPerson(input.people, name);
      if (technologyName(name) && !known) return null; // no person named like a technology
      if (known && known.name !== name) {
        spellings.push(name);
        name = known.name;
      }
    } else if (type === 'Technology') {
      const tech = technologyName(name);
      if (tech && tech !== name) {
        spellings.push(name);
        name = tech;
      }
    } else if (type === 'Decision') {
      name = clip(name, DECISION_NAME_MAX);
    }
    if (!normalizeEntityName(name)) return null;
    const entityId = entityUuid(channelId, type, name);
    const norm = normalizeEntityName(name);
    const cleanAliases = spellings
      .map((a) => a.trim().replace(/^@/, ''))
      .filter((a) => a && normalizeEntityName(a) !== norm);
    const c = Math.round(Math.min(1, Math.max(0, conf)) * 100) / 100;
    const prev = entities.get(entityId);
    if (prev) {
      if (!prev.factIds.includes(factId)) prev.factIds.push(factId);
      prev.aliases = [...new Set([...prev.aliases, ...cleanAliases])];
      prev.confidence = Math.max(prev.confidence, c);
      prev.properties = { ...properties, ...prev.properties };
      return prev;
    }
    const e: ExtractedEntity = {
      entityId,
      type,
      name,
      aliases: [...new Set(cleanAliases)],
      confidence: c,
      factIds: [factId],
      properties,
    };
    entities.set(entityId, e);
    for (const k of new Set([norm, ...e.aliases.map(normalizeEntityName), normalizeEntityName(rawName)]))
      byName.set(k, [...(byName.get(k) ?? []), e]);
    return e;
  };

  // every fact's author is a person of the message
  for (const f of facts) {
    const e = add('Person', f.authorName, 0.95, f.factId, [], {});
    if (e && !findKnownPerson(input.people, f.authorName)) newPeople.set(e.name, { name: e.name, aliases: [] });
  }
  for (const x of answer.entities) {
    const f = factOf(x.fact, x.name);
    const props: Record<string, string> = {};
    for (const [k, v] of Object.entries(x.properties)) if (v !== null && v !== '') props[k] = String(v);
    if (x.type === 'Decision') Object.assign(props, decisionProperties(props, f));
    const e = add(x.type, x.name, x.confidence, f.factId, x.aliases, x.type === 'Decision' ? props : {});
    if (e?.type === 'Person' && !findKnownPerson(input.people, e.name) && f.memoryText.includes(`@${x.name}`))
      newPeople.set(e.name, { name: e.name, aliases: [] });
  }

  const find = (name: string, type?: EntityType): ExtractedEntity | undefined => {
    const list = byName.get(normalizeEntityName(name)) ?? [];
    const known = findKnownPerson(input.people, name);
    const person = known ? entities.get(entityUuid(channelId, 'Person', known.name)) : undefined;
    return list.find((e) => !type || e.type === type) ?? (type === 'Person' || !type ? person : undefined) ?? list[0];
  };
  const relationships = new Map<string, ExtractedRelationship>();
  for (const r of answer.relationships) {
    const dir = DIRECTION[r.type];
    let source = find(r.source, dir?.[0]);
    let target = find(r.target, dir?.[1]);
    if (!source || !target || source.entityId === target.entityId) continue;
    let type: RelationshipType = r.type;
    if (dir && source.type === dir[1] && target.type === dir[0]) [source, target] = [target, source];
    if (dir && (source.type !== dir[0] || target.type !== dir[1])) type = 'RELATED_TO';
    if (source.type === 'Person' && target.type === 'Person' && PERSON_PAIR_TYPES.has(type)) continue;
    const f = factOf(r.fact, r.source, r.target);
    const c = Math.round(Math.min(1, Math.max(0, r.confidence)) * 100) / 100;
    const key = `${type}|${source.entityId}|${target.entityId}`;
    if ((relationships.get(key)?.confidence ?? -1) >= c) continue;
    relationships.set(key, {
      type,
      sourceId: source.entityId,
      targetId: target.entityId,
      confidence: c,
      validFrom: r.valid_from && DATE.test(r.valid_from) ? r.valid_from : messageDate,
      validUntil: r.valid_until && DATE.test(r.valid_until) ? r.valid_until : null,
      context: clip(r.context?.trim() || f.memoryText, CONTEXT_MAX),
      sourceFactId: f.factId,
    });
  }

  // decisions of this message: channel state and supersessions
  const newDecisions: NewDecision[] = [];
  for (const e of entities.values()) {
    if (e.type !== 'Decision') continue;
    const f = facts.find((x) => x.factId === e.factIds[0]) ?? facts[0]!;
    const about = [...relationships.values()]
      .filter((r) => r.sourceId === e.entityId || r.targetId === e.entityId)
      .map((r) => entities.get(r.sourceId === e.entityId ? r.targetId : r.sourceId)!)
      .filter((x) => x.type === 'Technology' || x.type === 'Project')
      .map((x) => x.name);
    const topicKeys = [...new Set([...about, ...f.topicTags].map(normalizeEntityName).filter(Boolean))].slice(0, 10);
    newDecisions.push({
      entityId: e.entityId,
      name: e.name,
      factId: f.factId,
      messageTs: f.messageTs,
      decidedBy: e.properties.decided_by ?? f.authorName,
      topicKeys,
      text: f.memoryText,
    });
  }
  // ownerships the facts state (the same rule as offline): the changed-owner test
  const known = new Set(
    [...input.people.flatMap((p) => [p.name, ...p.aliases]), ...facts.map((f) => f.authorName)].map(
      normalizeEntityName,
    ),
  );
  const newOwners: (KnownOwner & { change: boolean })[] = [];
  for (const f of facts) {
    if (f.factType === 'question') continue;
    const own = ownershipOf(factBody(f.memoryText), (n) => known.has(normalizeEntityName(n)));
    if (own)
      newOwners.push({
        subjectKey: normalizeEntityName(own.subject),
        subject: own.subject,
        owner: own.owner,
        factId: f.factId,
        messageTs: f.messageTs,
        change: own.change,
      });
  }
  return {
    entities: [...entities.values()],
    relationships: [...relationships.values()],
    supersessions: [
      ...findSupersessions(newDecisions, input.decisions),
      ...findOwnerChanges(newOwners, input.owners ?? []),
    ],
    people: [...newPeople.values()],
    decisions: newDecisions.map(({ text: _text, ...d }): KnownDecision => d),
    owners: newOwners.map(({ change: _change, ...o }) => o),
  };
};

/** The offline extractor's Decision properties, the model's values kept where valid (spec "Decision record"). */
const decisionProperties = (props: Record<string, string>, f: Fact): Record<string, string> => {
  const status = props.status?.toLowerCase();
  return {
    decided_by: props.decided_by || f.authorName,
    date: props.date && DATE.test(props.date) ? props.date : isoDate(f.messageTs),
    status:
      status === 'agreed' || status === 'implemented' || status === 'proposed'
        ? status
        : decisionParts(f.memoryText, f.authorName).status,
    context: clip(f.memoryText, CONTEXT_MAX),
  };
};
