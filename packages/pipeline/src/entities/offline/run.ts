// The state of one offline extraction: the message's graph so far, the channel state it reads and what it learns.
import { type Fact, normalizeEntityName } from '@atlas/core';
import { findOwnerChanges, type KnownOwner } from '../ownership.js';
import type { EntityExtraction, EntityExtractionInput, KnownDecision, KnownPerson } from '../port.js';
import { findSupersessions, type NewDecision } from '../supersede.js';
import { OFFLINE_CONFIDENCE } from './confidence.js';
import { GraphBuilder, type Mention } from './graph-builder.js';
import { addToIndex, buildIndex, type PersonIndex, resolvePerson } from './people.js';
import { factBody } from './text.js';
import { statedValidUntil } from './validity.js';

/** One message's extraction in progress: its graph, the people index (known and new) and what the channel learns. */
export interface MessageRun {
  readonly channelId: string;
  /** The message's source text (`''` when the event has none). */
  readonly sourceText: string;
  readonly g: GraphBuilder;
  /** The people the channel knew before this message. */
  readonly index: PersonIndex;
  /** The people first seen earlier in this message. */
  readonly local: PersonIndex;
  /** New people and new aliases of known people, by normalised name. */
  readonly newPeople: Map<string, KnownPerson>;
  readonly newDecisions: NewDecision[];
  readonly newOwners: (KnownOwner & { change: boolean })[];
}

/** One fact of the run: its text, its validity end, the mentions noted so far and the names already explained. */
export interface FactScope {
  readonly fact: Fact;
  /** The fact text without its author prefix (factBody). */
  readonly body: string;
  /** The fact's message time, ISO 8601 UTC. */
  readonly ts: string;
  /** statedValidUntil of the body: ISO date or null. */
  readonly until: string | null;
  /** Entity mentions with their character offset in `body`, in the order noted. */
  readonly mentions: Mention[];
  /** Names already explained (the author, meetings, teams, projects, people): no second reading as a proper noun. */
  readonly covered: string[];
  readonly authorId: string;
  /** The author's entity name (a known display name when the author is known by an alias). */
  readonly authorName: string;
  /** The body with its URLs blanked (same length, offsets kept). */
  readonly prose: string;
  readonly question: boolean;
  /** "X shared an image: a photo of a parade": a caption shows an event, nobody takes part in it. */
  readonly caption: boolean;
}

/** A fresh run over `input`: an empty graph and the people index of the channel. */
export const startRun = (input: EntityExtractionInput): MessageRun => ({
  channelId: input.facts.channelId,
  sourceText: input.facts.sourceText ?? '',
  g: new GraphBuilder(input.facts.channelId),
  index: buildIndex(input.people),
  local: { byKey: new Map(), byFirst: new Map(), bySquash: new Map() },
  newPeople: new Map(),
  newDecisions: [],
  newOwners: [],
});

/** The known person a spelling names: the channel's people first, then those first seen in this message; or null. */
export const knownPerson = (run: MessageRun, spelling: string): KnownPerson | null =>
  resolvePerson(run.index, spelling) ?? resolvePerson(run.local, spelling);

/**
 * A person mention: resolved to a known (or earlier in this message) person, else a new person. With `learn`, a new
 * person or a new alias of a known one is recorded in `run.newPeople`. Returns the person's entity id.
 */
export const personMention = (
  run: MessageRun,
  spelling: string,
  confidence: number,
  factId: string,
  learn: boolean,
): string => {
  const known = knownPerson(run, spelling);
  const name = known?.name ?? spelling.replace(/^@/, '');
  const id = run.g.entity('Person', name, confidence, factId, [spelling]);
  if (learn) {
    const alias = spelling.replace(/^@/, '');
    const isNewAlias =
      known !== null &&
      normalizeEntityName(alias) !== normalizeEntityName(known.name) &&
      !known.aliases.some((a) => normalizeEntityName(a) === normalizeEntityName(alias));
    if (!known || isNewAlias) {
      const entry = run.newPeople.get(normalizeEntityName(name)) ?? { name, aliases: [...(known?.aliases ?? [])] };
      if (isNewAlias && !entry.aliases.includes(alias)) entry.aliases.push(alias);
      run.newPeople.set(normalizeEntityName(name), entry);
      addToIndex(run.local, entry);
    }
  }
  return id;
};

/** Notes a mention of entity `id` at character `index` of the fact body (once per entity and fact). */
export const note = (run: MessageRun, f: FactScope, id: string, index: number): void => {
  const e = run.g.entities.get(id)!;
  if (!f.mentions.some((m) => m.id === id)) f.mentions.push({ id, type: e.type, name: e.name, index });
};

/** The scope of one fact, with its author mentioned (spec "Graph entity": Person, confidence 0.95). */
export const beginFact = (run: MessageRun, fact: Fact): FactScope => {
  const body = factBody(fact.memoryText);
  const ts = fact.messageTs;
  const authorId = personMention(run, fact.authorName, OFFLINE_CONFIDENCE.author, fact.factId, true);
  return {
    fact,
    body,
    ts,
    until: statedValidUntil(body, ts),
    mentions: [],
    covered: [fact.authorName],
    authorId,
    authorName: run.g.entities.get(authorId)!.name,
    prose: body.replace(/\bhttps?:\/\/\S+/g, (u) => ' '.repeat(u.length)),
    question: fact.factType === 'question',
    caption: /\bshared an image\b|^\s*(?:a |the )?(?:photo|picture|pic|image|photography) of\b/i.test(body),
  };
};

/** The extraction of a finished run: the graph, supersessions of earlier decisions and owners, what was learnt. */
export const finishRun = (run: MessageRun, input: EntityExtractionInput): EntityExtraction => ({
  entities: [...run.g.entities.values()],
  relationships: [...run.g.relationships.values()],
  supersessions: [
    ...findSupersessions(run.newDecisions, input.decisions),
    ...findOwnerChanges(run.newOwners, input.owners ?? []),
  ],
  people: [...run.newPeople.values()],
  decisions: run.newDecisions.map(({ text: _text, ...d }): KnownDecision => d),
  owners: run.newOwners.map(({ change: _change, ...o }) => o),
});
