import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  type EntitiesExtracted,
  type EntityType,
  ExtractedEntity,
  ExtractedRelationship,
  entityUuid,
  type Fact,
  type FactsExtracted,
  factUuid,
  messageUuid,
  Supersession,
} from '@atlas/core';
import { describe, expect, it } from 'vitest';
import { OfflineFactExtractor } from '../facts/offline-extractor.js';
import { preprocess } from '../facts/preprocess.js';
import { selectFacts } from '../facts/select.js';
import { CLOJURIANS, DATA_DIR, SlackExport } from '../test-support.js';
import {
  decisionParts,
  findGroups,
  findMeetings,
  findTeams,
  OFFLINE_CONFIDENCE,
  OfflineEntityExtractor,
  questionEntities,
  statedValidUntil,
  technologyName,
} from './offline/index.js';
import type { EntityExtraction, KnownDecision, KnownPerson } from './port.js';

const CHANNEL = 'C0TEST';
const TS = '2018-02-05T14:30:00.000Z';
const extractor = new OfflineEntityExtractor();

/** A fact as the fact extractor writes it; `text` is the memory text. */
const fact = (text: string, over: Partial<Fact> = {}): Fact => {
  const messageId = messageUuid('platform_a', CHANNEL, over.messageTs ?? TS);
  return {
    factId: factUuid(messageId, text),
    memoryText: text,
    factType: 'observation',
    importance: 'medium',
    qualityScore: 0.7,
    topicTags: [],
    entityTags: [],
    actionTags: [],
    authorId: 'U0ALICE',
    authorName: 'alice',
    messageTs: TS,
    threadTs: null,
    permalink: 'https://example.slack.com/archives/C0TEST/p1',
    threadContextSummary: '',
    validAt: over.messageTs ?? TS,
    sourceLang: 'en',
    ...over,
  };
};

const event = (facts: Fact[], sourceText = ''): FactsExtracted => ({
  messageId: messageUuid('platform_a', CHANNEL, facts[0]?.messageTs ?? TS),
  platform: 'platform_a',
  channelId: CHANNEL,
  sourceMessageId: '1517841000.000100',
  extractor: 'offline-regex@1',
  extractedAt: TS,
  facts,
  sourceText,
  contextText: '',
});

const run = (facts: Fact[], people: KnownPerson[] = [], decisions: KnownDecision[] = [], sourceText = '') =>
  extractor.extractSync({ facts: event(facts, sourceText), people, decisions });

const named = (out: EntityExtraction, type: EntityType, name: string) =>
  out.entities.find((e) => e.type === type && e.name === name);
const id = (type: EntityType, name: string) => entityUuid(CHANNEL, type, name);
const rel = (out: EntityExtraction, type: string, source: string, target: string) =>
  out.relationships.find((r) => r.type === type && r.sourceId === source && r.targetId === target);

/** The invariants of every extraction: schema-valid, ends among the entities, one entity per id. */
const checkShape = (out: EntityExtraction): void => {
  for (const e of out.entities) ExtractedEntity.parse(e);
  for (const r of out.relationships) ExtractedRelationship.parse(r);
  for (const s of out.supersessions) Supersession.parse(s);
  const ids = new Set(out.entities.map((e) => e.entityId));
  expect(ids.size).toBe(out.entities.length);
  for (const e of out.entities) expect(e.entityId).toBe(entityUuid(CHANNEL, e.type, e.name));
  for (const r of out.relationships) {
    expect(ids.has(r.sourceId) && ids.has(r.targetId)).toBe(true);
    expect(r.context.length).toBeLessThanOrEqual(300);
    expect(r.validFrom).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  }
};

describe('OfflineEntityExtractor: people', () => {
  const alice: KnownPerson = { name: 'Alice Chen', aliases: ['alice', 'achen'] };

  it('adds the author (0.95, the author id is not an alias) and returns a new author as a new person', () => {
    const out = run([fact('bob has a question about macros.', { authorName: 'bob', authorId: 'U0BOB' })]);
    checkShape(out);
    const bob = named(out, 'Person', 'bob')!;
    expect(bob.confidence).toBe(OFFLINE_CONFIDENCE.author);
    expect(bob.aliases).toEqual([]);
    expect(out.people).toEqual([{ name: 'bob', aliases: [] }]);
    expect(run([fact('bob again.', { authorName: 'bob' })], [{ name: 'bob', aliases: [] }]).people).toEqual([]);
  });

  it('resolves @mentions and entity tags to the known display name, the spelling used as an alias', () => {
    const f = fact('bob asked @achen to review the patch, alice said yes.', {
      authorName: 'bob',
      entityTags: ['achen'],
    });
    const out = run([f], [alice]);
    checkShape(out);
    const person = named(out, 'Person', 'Alice Chen')!;
    expect(person.confidence).toBe(OFFLINE_CONFIDENCE.mention);
    expect(person.aliases).toContain('achen');
    expect(out.entities.filter((e) => e.type === 'Person').map((e) => e.name)).toEqual(['bob', 'Alice Chen']);
    // a new handle for a known person is returned so the channel state learns it
    const known = [{ name: 'Alice Chen', aliases: ['achen'] }];
    const f2 = fact('bob thanked @Alice for the review.', { authorName: 'bob', entityTags: ['Alice'] });
    const byFirstName = run([f2], known);
    expect(named(byFirstName, 'Person', 'Alice Chen')!.aliases).toContain('Alice');
    expect(byFirstName.people).toContainEqual({ name: 'Alice Chen', aliases: ['achen', 'Alice'] });
  });

  it('resolves an author who is known under another display name', () => {
    const out = run([fact('alice pushed the fix.')], [alice]);
    expect(named(out, 'Person', 'Alice Chen')).toMatchObject({ confidence: 0.95, aliases: ['alice'] });
    expect(out.people).toEqual([]);
  });

  it('finds names compromise detects with a lower confidence, never a technology as a person', () => {
    const f = fact('alice talked with David Nolen about ClojureScript and Rich Hickey liked it.', {
      entityTags: ['David Nolen', 'ClojureScript', 'Rich Hickey'],
    });
    const out = run([f]);
    checkShape(out);
    expect(named(out, 'Person', 'David Nolen')?.confidence).toBe(OFFLINE_CONFIDENCE.detectedPerson);
    expect(named(out, 'Person', 'Rich Hickey')?.confidence).toBe(OFFLINE_CONFIDENCE.detectedPerson);
    expect(named(out, 'Technology', 'ClojureScript')).toBeDefined();
    expect(out.entities.some((e) => e.type === 'Person' && technologyName(e.name))).toBe(false);
    // detected names are pending: they do not join the channel's known people
    expect(out.people.map((p) => p.name)).toEqual(['alice']);
  });

  it('joins a full name to the known handle made from it (stuarthalloway, dnolen, tony.kay)', () => {
    const people: KnownPerson[] = [
      { name: 'stuarthalloway', aliases: [] },
      { name: 'dnolen', aliases: [] },
      { name: 'tony.kay', aliases: [] },
    ];
    const f = fact('alice talked with David Nolen, Tony Kay and Stuart Halloway about ClojureScript.', {
      entityTags: ['David Nolen', 'Tony Kay', 'Stuart Halloway', 'ClojureScript'],
    });
    const out = run([f], people);
    checkShape(out);
    expect(named(out, 'Person', 'dnolen')?.aliases).toContain('David Nolen');
    expect(named(out, 'Person', 'tony.kay')?.aliases).toContain('Tony Kay');
    expect(named(out, 'Person', 'stuarthalloway')?.aliases).toContain('Stuart Halloway');
    expect(
      out.entities
        .filter((e) => e.type === 'Person')
        .map((e) => e.name)
        .sort(),
    ).toEqual(['alice', 'dnolen', 'stuarthalloway', 'tony.kay']);
    // initial + surname is ambiguous: "Dana Nolen" maps to dnolen as well (accepted: a channel rarely has both)
    expect(
      named(run([fact('alice met Dana Nolen.', { entityTags: ['Dana Nolen'] })], people), 'Person', 'dnolen'),
    ).toMatchObject({
      aliases: ['Dana Nolen'],
    });
  });

  it('does not take a library named like a person for one ("support for Clara")', () => {
    const out = run([
      fact('Cursive 1.6.3 is out now, which contains support for Clara!', { entityTags: ['Cursive', 'Clara'] }),
    ]);
    expect(named(out, 'Person', 'Clara')).toBeUndefined();
  });
});

describe('OfflineEntityExtractor: technologies and projects', () => {
  it('makes lexicon tags Technologies (0.85), other spellings as aliases', () => {
    const out = run([fact('alice runs lein install before each release.', { entityTags: ['Leiningen'] })]);
    expect(named(out, 'Technology', 'Leiningen')).toMatchObject({ confidence: 0.85, aliases: ['lein'] });
  });

  it('finds projects by ownership cue with WORKS_ON 0.85, and USES from "X uses Y" (0.85)', () => {
    const f = fact('alice is working on Expound. Expound uses clojure.spec for the error messages.', {
      entityTags: ['Expound', 'clojure.spec'],
    });
    const out = run([f]);
    checkShape(out);
    const expound = named(out, 'Project', 'Expound')!;
    expect(expound.confidence).toBe(OFFLINE_CONFIDENCE.projectOwned);
    expect(rel(out, 'WORKS_ON', id('Person', 'alice'), expound.entityId)?.confidence).toBe(0.85);
    expect(rel(out, 'USES', expound.entityId, id('Technology', 'clojure.spec'))?.confidence).toBe(0.85);
  });

  it('finds "my library X", repository URLs (alias owner/repo) and release notes (WORKS_ON implied 0.6)', () => {
    const out = run([
      fact("alice's library sql-migrate-lite is on https://github.com/achen/sql-migrate-lite now."),
      fact('Keechma Toolbox 0.1.8 is out.', { factType: 'decision', entityTags: ['Toolbox'] }),
    ]);
    checkShape(out);
    const lib = named(out, 'Project', 'sql-migrate-lite')!;
    expect(lib.aliases).toEqual(['achen/sql-migrate-lite']);
    expect(lib.properties).toEqual({ repo: 'achen/sql-migrate-lite' });
    expect(lib.factIds).toHaveLength(1);
    expect(rel(out, 'WORKS_ON', id('Person', 'alice'), lib.entityId)?.confidence).toBe(0.85);
    const toolbox = named(out, 'Project', 'Keechma Toolbox')!;
    expect(toolbox.confidence).toBeGreaterThanOrEqual(0.7);
    expect(rel(out, 'WORKS_ON', id('Person', 'alice'), toolbox.entityId)?.confidence).toBe(0.6);
    expect(named(out, 'Project', 'Toolbox')).toBeUndefined();
  });

  it('keeps a bare proper noun as a pending project (0.45), but no class names, places or acronyms', () => {
    const f = fact('alice tried Arachne on a ScheduledThreadPoolExecutor in London with the JVM and TLS.', {
      entityTags: ['Arachne', 'ScheduledThreadPoolExecutor', 'London', 'JVM', 'TLS'],
    });
    const out = run([f]);
    expect(named(out, 'Project', 'Arachne')?.confidence).toBe(OFFLINE_CONFIDENCE.projectBare);
    expect(out.entities.filter((e) => e.type === 'Project').map((e) => e.name)).toEqual(['Arachne']);
    expect(named(out, 'Technology', 'JVM')).toBeDefined();
  });

  it('relates co-occurring things weakly (0.35, at most 3 per fact), never person to person', () => {
    const f = fact('alice compared Kafka, Redis, Postgres, MySQL and Docker with @bob.', {
      entityTags: ['Kafka', 'Redis', 'Postgres', 'MySQL', 'Docker', 'bob'],
    });
    const out = run([f], [{ name: 'bob', aliases: [] }]);
    checkShape(out);
    const related = out.relationships.filter((r) => r.type === 'RELATED_TO');
    expect(related).toHaveLength(3);
    for (const r of related) expect(r.confidence).toBe(0.35);
    const people = new Set(out.entities.filter((e) => e.type === 'Person').map((e) => e.entityId));
    expect(out.relationships.some((r) => people.has(r.sourceId) && people.has(r.targetId))).toBe(false);
  });

  it('merges the mentions of one entity within a message (union of fact ids, max confidence)', () => {
    const a = fact('alice likes Datomic.', { entityTags: ['Datomic'] });
    const b = fact('alice runs Datomic in production.', { entityTags: ['Datomic'] });
    const out = run([a, b]);
    const datomic = out.entities.filter((e) => e.type === 'Technology');
    expect(datomic).toHaveLength(1);
    expect(datomic[0]!.factIds).toEqual([a.factId, b.factId]);
    expect(out.entities.filter((e) => e.type === 'Person')[0]!.factIds).toEqual([a.factId, b.factId]);
  });
});

describe('OfflineEntityExtractor: teams and meetings', () => {
  it('finds teams, MEMBER_OF the author only when the author is on it (0.85)', () => {
    const out = run([
      fact('alice is on the platform team and talked to the Datomic team yesterday.'),
      fact('bob joined the SRE squad.', { authorName: 'bob' }),
    ]);
    checkShape(out);
    expect(named(out, 'Team', 'platform team')?.confidence).toBe(0.75);
    expect(rel(out, 'MEMBER_OF', id('Person', 'alice'), id('Team', 'platform team'))?.confidence).toBe(0.85);
    expect(named(out, 'Team', 'Datomic team')).toBeDefined();
    expect(rel(out, 'MEMBER_OF', id('Person', 'alice'), id('Team', 'Datomic team'))).toBeUndefined();
    expect(rel(out, 'MEMBER_OF', id('Person', 'bob'), id('Team', 'SRE squad'))).toBeDefined();
  });

  it('reads "our X team" from the source message (memory texts say "their")', () => {
    const out = run(
      [fact('alice thinks their infra team should own the deploys.')],
      [],
      [],
      'I think our infra team should own the deploys.',
    );
    expect(rel(out, 'MEMBER_OF', id('Person', 'alice'), id('Team', 'infra team'))).toBeDefined();
  });

  it('does not read "alice and team" (a resolved "we") or "a group of" as teams', () => {
    expect(findTeams('alice and team moved a group of services to the new cluster.')).toEqual([]);
  });

  it('names meetings: a named conference keeps its name, a generic one is kind plus day', () => {
    expect(
      findMeetings('alice will be at Clojure/West and EuroClojure 2014 was great.', TS).map((m) => m.name),
    ).toEqual(['Clojure/West', 'EuroClojure 2014']);
    expect(findMeetings('The Monday standup moved; the retro is on Friday.', TS).map((m) => m.name)).toEqual([
      'Monday standup',
      'Friday retrospective',
    ]);
    // TS is a Monday: "tomorrow" is Tuesday
    expect(
      findMeetings('alice has a 1:1 with bob tomorrow and the Bristol Clojure Meetup next week.', TS).map(
        (m) => m.name,
      ),
    ).toEqual(['Tuesday 1:1', 'Bristol Clojure Meetup']);
  });

  it('does not take programming words for meetings (call, sync, planning, 1:1 ratios)', () => {
    const text =
      'The call to reduce returns nil, so alice is planning to sync the atom; the mapping is almost 1:1 with the IR (core.clj:1:1).';
    expect(findMeetings(text, TS)).toEqual([]);
  });

  it('adds PARTICIPATED_IN when the author attends or speaks (0.85), not for a mere mention', () => {
    const out = run([
      fact('alice will be speaking at Clojure/West about Datomic.'),
      fact("alice can't attend the Monday standup."),
      fact('The weekly sync was moved to Thursday.'),
    ]);
    checkShape(out);
    expect(rel(out, 'PARTICIPATED_IN', id('Person', 'alice'), id('Meeting', 'Clojure/West'))?.confidence).toBe(0.85);
    expect(named(out, 'Meeting', 'Monday standup')).toBeDefined();
    expect(rel(out, 'PARTICIPATED_IN', id('Person', 'alice'), id('Meeting', 'Monday standup'))).toBeUndefined();
    expect(named(out, 'Meeting', 'weekly sync')?.properties).toEqual({ kind: 'sync' });
    expect(out.relationships.filter((r) => r.type === 'PARTICIPATED_IN')).toHaveLength(1);
  });
});

describe('OfflineEntityExtractor: decisions', () => {
  it('makes one Decision per decision fact: imperative name, decided_by, date, status, context; DECIDED_BY 0.9', () => {
    const f = fact('alice and team decided to use Postgres for the event log, because it is boring.', {
      factType: 'decision',
      entityTags: ['Postgres'],
      topicTags: ['postgres', 'event log'],
    });
    const out = run([f]);
    checkShape(out);
    const d = out.entities.find((e) => e.type === 'Decision')!;
    expect(d.name).toBe('Use Postgres for the event log');
    expect(d.properties).toEqual({ decided_by: 'alice', date: '2018-02-05', status: 'agreed', context: f.memoryText });
    expect(rel(out, 'DECIDED_BY', id('Person', 'alice'), d.entityId)?.confidence).toBe(0.9);
    expect(rel(out, 'RELATED_TO', d.entityId, id('Technology', 'Postgres'))?.confidence).toBe(0.6);
    expect(out.decisions).toEqual([
      {
        entityId: d.entityId,
        name: 'Use Postgres for the event log',
        factId: f.factId,
        messageTs: TS,
        decidedBy: 'alice',
        topicKeys: ['postgres', 'event log'],
      },
    ]);
  });

  it('reads status: implemented (migrated, released, merged), proposed (should, let’s consider), else agreed', () => {
    expect(decisionParts('alice and team migrated the event log to Kafka last week.', 'alice')).toMatchObject({
      name: 'Migrate the event log to Kafka last week',
      status: 'implemented',
    });
    expect(decisionParts('bbrinck has released Expound 0.5.0, which includes this feature.', 'bbrinck')).toMatchObject({
      name: 'Release Expound 0.5.0',
      status: 'implemented',
      decider: null,
      explicit: true,
    });
    expect(decisionParts('alice and team should switch to Kafka for the event log.', 'alice')).toMatchObject({
      name: 'Switch to Kafka for the event log',
      status: 'proposed',
    });
    expect(decisionParts('mikethompson chose a vector because visually it has less noise.', 'mikethompson').name).toBe(
      'Choose a vector',
    );
    expect(decisionParts('Fulcro 2.1.5 released. Includes the with-parent-context macro.', 'tony.kay')).toMatchObject({
      name: 'Release Fulcro 2.1.5',
      explicit: false,
    });
  });

  it('takes decision names from whole phrases, never ending mid-phrase', () => {
    expect(decisionParts('bob and team have released acme version 1.4.2 in which the leak is fixed.', 'bob').name).toBe(
      'Release acme version 1.4.2',
    );
    expect(
      decisionParts(
        'bob and team have released Acme v2.3 with support for reading deletes from the Mongo change stream using pre-images.',
        'bob',
      ).name,
    ).toBe('Release Acme v2.3 with support for reading deletes from the Mongo change stream');
    expect(
      decisionParts(
        'bob and team have moved to an external NFS share instead of the bundled Acme NFS server pod.',
        'bob',
      ).name,
    ).toBe('Move to an external NFS share instead of the bundled Acme NFS server pod');
    expect(
      decisionParts(
        'bob and team have released the fix for issue https://github.com/o/acme/issues/42#c1 Please upgrade.',
        'bob',
      ).name,
    ).toBe('Release the fix for issue #42');
    expect(decisionParts('The fix has been released in v0.7.6. It fixes replica tables.', 'bob').name).toBe(
      'Release fix in v0.7.6',
    );
    expect(
      decisionParts('chore: bump the base image until Go 1.25 is out by @Bob in #38 (https://x/pull/38)', 'ci').name,
    ).toBe('Bump the base image until Go 1.25 is out');
  });

  it('never ends a decision name on a preposition, article or conjunction (property)', () => {
    const tails = ['in which it broke', 'for the team', 'using the new flag', 'and then the rest', 'with a', 'of the'];
    const dangling = /\s(?:in|on|at|to|for|of|from|with|by|using|the|a|an|and|or|which)$/i;
    for (let n = 4; n < 24; n++) {
      for (const tail of tails) {
        const body = `alice and team decided to ${'move the ingestion service to the new cluster '.slice(0, n * 3)} ${tail}.`;
        const name = decisionParts(body, 'alice').name.replace(/…$/, '');
        expect(name.length, name).toBeLessThanOrEqual(80);
        expect(name, body).not.toMatch(dangling);
      }
    }
  });

  it('keeps names short (≤ 80 characters) and credits a named decider', () => {
    const long = `alice and team decided to ${'rewrite the whole ingestion pipeline in Rust '.repeat(4)}.`;
    expect(decisionParts(long, 'alice').name.length).toBeLessThanOrEqual(80);
    const out = run(
      [fact('bob decided to drop Java 7 support.', { factType: 'decision', entityTags: ['bob', 'Java'] })],
      [{ name: 'bob', aliases: [] }],
    );
    const d = out.entities.find((e) => e.type === 'Decision')!;
    expect(d.properties.decided_by).toBe('bob');
    expect(rel(out, 'DECIDED_BY', id('Person', 'bob'), d.entityId)).toBeDefined();
    expect(rel(out, 'DECIDED_BY', id('Person', 'alice'), d.entityId)).toBeUndefined();
  });

  it('flags a later decision on the same topic as superseding the earlier one', () => {
    const first = fact('alice and team decided to use Postgres for the event log.', {
      factType: 'decision',
      entityTags: ['Postgres'],
      topicTags: ['postgres', 'event log'],
    });
    const m1 = run([first]);
    const later = '2018-02-09T09:00:00.000Z';
    const second = fact('bob and team are moving the event log from Postgres to Kafka.', {
      factType: 'decision',
      authorName: 'bob',
      messageTs: later,
      entityTags: ['Postgres', 'Kafka'],
      topicTags: ['event log', 'postgres', 'kafka'],
    });
    const m2 = run([second], m1.people, m1.decisions);
    checkShape(m2);
    expect(m2.supersessions).toEqual([
      expect.objectContaining({
        factId: first.factId,
        supersededBy: second.factId,
        oldEntityId: m1.decisions[0]!.entityId,
        newEntityId: m2.decisions[0]!.entityId,
        invalidAt: later,
        certain: true,
      }),
    ]);
  });
});

describe('OfflineEntityExtractor: validity and determinism', () => {
  it('sets validFrom to the message date and validUntil only when the text states an end', () => {
    const out = run([fact('alice is on the platform team until March.'), fact('alice is working on Expound.')]);
    expect(rel(out, 'MEMBER_OF', id('Person', 'alice'), id('Team', 'platform team'))).toMatchObject({
      validFrom: '2018-02-05',
      validUntil: '2018-03-01',
    });
    expect(rel(out, 'WORKS_ON', id('Person', 'alice'), id('Project', 'Expound'))?.validUntil).toBeNull();
    expect(statedValidUntil('until the end of March 2019', TS)).toBe('2019-03-31');
    expect(statedValidUntil('until Friday', TS)).toBe('2018-02-09');
    expect(statedValidUntil('until January', TS)).toBe('2019-01-01');
    expect(statedValidUntil('no longer', TS)).toBeNull();
  });

  it('uses the fact text as context (≤ 300 characters) and the fact id as sourceFactId', () => {
    const f = fact(`alice is working on Expound. ${'It has many features. '.repeat(20)}`);
    const out = run([f]);
    const r = rel(out, 'WORKS_ON', id('Person', 'alice'), id('Project', 'Expound'))!;
    expect(r.sourceFactId).toBe(f.factId);
    expect(r.context.length).toBeLessThanOrEqual(300);
    expect(r.context.startsWith('alice is working on Expound.')).toBe(true);
  });

  it('returns nothing for an empty fact set', () => {
    expect(run([])).toEqual({
      entities: [],
      relationships: [],
      supersessions: [],
      people: [],
      decisions: [],
      owners: [],
    });
  });
});

describe('questionEntities', () => {
  const people: KnownPerson[] = [
    { name: 'Alice Chen', aliases: ['alice'] },
    { name: 'noisesmith', aliases: [] },
  ];

  it('names people, technologies, meetings and teams a question mentions', () => {
    expect(questionEntities('What did alice decide about Postgres at the Monday standup?', people)).toEqual([
      { name: 'Alice Chen', type: 'Person' },
      { name: 'Postgres', type: 'Technology' },
      { name: 'Monday standup', type: 'Meeting' },
    ]);
    expect(questionEntities('Is the platform team still using lein or boot-tools-deps?', people)).toEqual([
      { name: 'platform team', type: 'Team' },
      { name: 'Leiningen', type: 'Technology' },
    ]);
  });

  it('names projects: repository paths and proper nouns that are no person or technology', () => {
    expect(questionEntities('who maintains seancorfield/boot-tools-deps?', people)).toEqual([
      { name: 'boot-tools-deps', type: 'Project' },
    ]);
    expect(questionEntities('What did noisesmith say about Arachne and Clojure?', people)).toEqual([
      { name: 'noisesmith', type: 'Person' },
      { name: 'Arachne', type: 'Project' },
      { name: 'Clojure', type: 'Technology' },
    ]);
    expect(questionEntities('what is going on?', people)).toEqual([]);
  });
});

describe('OfflineEntityExtractor on a real channel-day (clojurians #clojure, 2018-02-02)', () => {
  const slack = new SlackExport(CLOJURIANS, 'clojurians');
  const facts = new OfflineFactExtractor();
  const inputs = slack.inputs('clojure', ['2018-02-02']);

  /** The whole day through the fact extractor and the entity extractor, the channel state carried along. */
  const runDay = (): { events: Omit<EntitiesExtracted, 'extractedAt'>[]; people: KnownPerson[] } => {
    let people: KnownPerson[] = [];
    let decisions: KnownDecision[] = [];
    const events: Omit<EntitiesExtracted, 'extractedAt'>[] = [];
    for (const input of inputs) {
      const kept = selectFacts(facts.extractSync(input), 0.5);
      if (kept.length === 0) continue;
      const m = input.message;
      const set: FactsExtracted = {
        messageId: m.messageId,
        platform: m.platform,
        channelId: m.channelId,
        sourceMessageId: m.platformMessageId,
        extractor: facts.id,
        extractedAt: m.timestamp,
        facts: kept,
        sourceText: preprocess(m).text.slice(0, 1000),
        contextText: '',
      };
      const out = extractor.extractSync({ facts: set, people, decisions });
      people = [...people, ...out.people.filter((p) => !people.some((q) => q.name === p.name))];
      decisions = [...decisions, ...out.decisions];
      events.push({
        messageId: m.messageId,
        platform: m.platform,
        channelId: m.channelId,
        sourceMessageId: m.platformMessageId,
        messageTs: m.timestamp,
        extractor: extractor.id,
        entities: out.entities,
        relationships: out.relationships,
        supersessions: out.supersessions,
      });
    }
    return { events, people };
  };

  it('finds the day’s technologies, its authors as people, repository projects, and no person named like a technology', () => {
    const { events, people } = runDay();
    const all = events.flatMap((e) => e.entities);
    const names = (type: EntityType) => new Set(all.filter((e) => e.type === type).map((e) => e.name));
    for (const t of ['Leiningen', 'Clojure', 'Java', 'Maven', 'deps.edn', 'tools.deps', 'Git'])
      expect(names('Technology')).toContain(t);
    for (const p of ['noisesmith', 'alexmiller', 'ghadi', 'tatyana', 'mfikes']) expect(names('Person')).toContain(p);
    expect(names('Project')).toContain('lein-licenses');
    expect(all.find((e) => e.name === 'lein-licenses')!.aliases).toEqual(['technomancy/lein-licenses']);
    expect(names('Team')).toContain('leiningen team');
    expect([...names('Person')].filter((n) => technologyName(n))).toEqual([]);
    expect(all.find((e) => e.type === 'Technology' && e.name === 'Leiningen')!.aliases).toContain('lein');
    // the authors became the channel's known people; a mention resolves to the same entity id
    expect(people.map((p) => p.name)).toContain('noisesmith');
    for (const e of events) {
      const ids = new Set(e.entities.map((x) => x.entityId));
      for (const r of e.relationships) expect(ids.has(r.sourceId) && ids.has(r.targetId)).toBe(true);
    }
  });

  it('is deterministic: the same day gives the same events', () => {
    expect(JSON.stringify(runDay())).toBe(JSON.stringify(runDay()));
  });
});

describe('OfflineEntityExtractor: events and groups of community life', () => {
  const mel = (text: string, over: Partial<Fact> = {}) =>
    fact(text, { authorName: 'Melanie', authorId: 'melanie', ...over });
  const car = (text: string, over: Partial<Fact> = {}) =>
    fact(text, { authorName: 'Caroline', authorId: 'caroline', ...over });
  const FRIENDS: KnownPerson[] = [
    { name: 'Caroline', aliases: ['caroline'] },
    { name: 'Melanie', aliases: ['melanie'] },
  ];

  it('names events by their noun phrase, lower-cased and singular, and never a programming word', () => {
    const names = (t: string) => findMeetings(t, TS).map((m) => m.name);
    expect(names('Last week Caroline went to an LGBTQ+ pride parade.')).toEqual(['LGBTQ pride parade']);
    expect(names('Melanie just signed up for a pottery class yesterday.')).toEqual(['pottery class']);
    expect(names('Melanie ran a charity race for mental health last Saturday.')).toEqual(['charity race']);
    expect(names('Caroline joined a mentoring program for LGBTQ youth.')).toEqual(['mentoring program']);
    expect(names('Caroline attended an LGBTQ support group meeting.')).toEqual(['LGBTQ support group meeting']);
    expect(names('Melanie and team went camping at the beach.')).toEqual(['camping trip']);
    expect(names('Caroline gave a talk at a school about being transgender.')).toEqual(['talk at school']);
    expect(names('Melanie saw Matt Patterson in concert.')).toEqual(['concert']);
    expect(names('Caroline and team had a blast last year at the Pride fest.')).toEqual(['pride festival']);
    for (const code of [
      'newInstance instantiates the class and returns it.',
      'There is a race condition in the session store of the web service.',
      'Define a helper class and start a REPL session.',
      'It uses a third party library and a round trip to the server.',
      'Show me the program you wrote; we will talk to the team about it.',
      'The march of progress continues in March.',
    ])
      expect(names(code)).toEqual([]);
  });

  it('finds groups with a group noun only: support group, activist group, adoption agency, LGBTQ community', () => {
    const names = (t: string) => findGroups(t).map((g) => g.name);
    expect(names('Caroline went to a support group yesterday.')).toEqual(['support group']);
    expect(names('Caroline just joined a new LGBTQ activist group last Tuesday.')).toEqual(['LGBTQ activist group']);
    expect(names('Caroline passed the adoption agency interviews.')).toEqual(['adoption agency']);
    expect(names('It is great to give a voice to the trans community.')).toEqual(['trans community']);
    expect(names('Melanie joined the club.')).toEqual(['club']);
    expect(names('Melanie sings in a gospel choir.')).toEqual(['gospel choir']);
    expect(names('A photo of a group of people; a strong community; the Clojure community; the community.')).toEqual(
      [],
    );
  });

  it('adds PARTICIPATED_IN from the author: 0.85 when a verb says so, 0.6 when implied', () => {
    const out = run(
      [
        mel('Melanie just signed up for a pottery class yesterday.'),
        car('One special memory for Caroline was this pride parade Caroline went to a few weeks ago.'),
        mel('Melanie ran a charity race for mental health last Saturday.'),
        car('Caroline took part in a pride parade last weekend.'),
        mel("Melanie's pottery class was fun."),
        car('Caroline felt super powerful giving the talk at a school.'),
      ],
      FRIENDS,
    );
    checkShape(out);
    const p = (who: string, what: string) =>
      rel(out, 'PARTICIPATED_IN', id('Person', who), id('Meeting', what))?.confidence;
    expect(p('Melanie', 'pottery class')).toBe(0.85); // max of the explicit and the implied mention
    expect(p('Caroline', 'pride parade')).toBe(0.85);
    expect(p('Melanie', 'charity race')).toBe(0.85);
    expect(p('Caroline', 'talk at school')).toBeDefined();
    const implied = run([mel("Melanie's pottery class was fun.")], FRIENDS);
    expect(rel(implied, 'PARTICIPATED_IN', id('Person', 'Melanie'), id('Meeting', 'pottery class'))?.confidence).toBe(
      OFFLINE_CONFIDENCE.participatedInImplied,
    );
  });

  it('adds companions named with "with" at 0.6, and no participation for someone else or a negation', () => {
    const out = run(
      [
        mel('Melanie went to a pottery workshop with Caroline last Friday.'),
        mel("Melanie can't go to the concert this weekend."),
        mel('Caroline went to a pride parade last week.'),
      ],
      FRIENDS,
    );
    checkShape(out);
    const melId = id('Person', 'Melanie');
    expect(rel(out, 'PARTICIPATED_IN', melId, id('Meeting', 'pottery workshop'))?.confidence).toBe(0.85);
    expect(rel(out, 'PARTICIPATED_IN', id('Person', 'Caroline'), id('Meeting', 'pottery workshop'))?.confidence).toBe(
      OFFLINE_CONFIDENCE.participatedInCompanion,
    );
    expect(named(out, 'Meeting', 'concert')).toBeDefined();
    expect(rel(out, 'PARTICIPATED_IN', melId, id('Meeting', 'concert'))).toBeUndefined();
    expect(rel(out, 'PARTICIPATED_IN', melId, id('Meeting', 'pride parade'))).toBeUndefined();
  });

  it('adds MEMBER_OF: joined / part of / goes to at 0.85, went to once at 0.6', () => {
    const out = run(
      [
        car('Caroline just joined a new LGBTQ activist group last Tuesday.'),
        mel('Melanie is part of a book club.'),
        car('Caroline went to a support group yesterday and it was so powerful.'),
        mel('Melanie talked about the trans community.'),
      ],
      FRIENDS,
    );
    checkShape(out);
    const m = (who: string, what: string) => rel(out, 'MEMBER_OF', id('Person', who), id('Team', what))?.confidence;
    expect(m('Caroline', 'LGBTQ activist group')).toBe(0.85);
    expect(m('Melanie', 'book club')).toBe(0.85);
    expect(m('Caroline', 'support group')).toBe(OFFLINE_CONFIDENCE.memberOfImplied);
    expect(named(out, 'Team', 'trans community')).toBeDefined();
    expect(m('Melanie', 'trans community')).toBeUndefined();
  });

  it('creates no community event, group or participation from a question or an image caption', () => {
    const out = run(
      [
        mel('Are you going to the pride parade?', { factType: 'question' }),
        mel('Did you join the book club?', { factType: 'question' }),
        car('Caroline shared an image: a photo of a parade with people walking down the street.'),
      ],
      FRIENDS,
    );
    checkShape(out);
    expect(out.entities.filter((e) => e.type === 'Meeting' || e.type === 'Team')).toEqual([]);
    expect(out.relationships.filter((r) => r.type === 'PARTICIPATED_IN' || r.type === 'MEMBER_OF')).toEqual([]);
  });

  it('merges repeated mentions of one event into one entity (same normalised name)', () => {
    const out = run(
      [
        car('Last week Caroline went to a Pride parade.'),
        car('Caroline went to a pride parade last Friday and it was awesome.'),
        mel('Melanie went camping with the kids.'),
        mel('Melanie loves their camping trips.'),
      ],
      FRIENDS,
    );
    checkShape(out);
    const meetings = out.entities.filter((e) => e.type === 'Meeting');
    expect(meetings.map((e) => e.name).sort()).toEqual(['camping trip', 'pride parade']);
    expect(named(out, 'Meeting', 'pride parade')!.factIds).toHaveLength(2);
    expect(named(out, 'Meeting', 'camping trip')!.factIds).toHaveLength(2);
  });
});

describe('OfflineEntityExtractor on LoCoMo (first conversation: Caroline and Melanie)', () => {
  const file = path.join(DATA_DIR, 'locomo/locomo-dev.json');
  const conv = (JSON.parse(readFileSync(file, 'utf8')) as { conversation: Record<string, unknown> }[])[0]!.conversation;
  const facts = new OfflineFactExtractor();

  it('relates Caroline and Melanie to the parades, classes, races and camping trips they took part in', () => {
    let people: KnownPerson[] = [];
    const relationships: { who: string; what: string }[] = [];
    const names = new Map<string, string>();
    const sessions = Object.keys(conv)
      .filter((k) => /^session_\d+$/.test(k))
      .sort((a, b) => Number(a.split('_')[1]) - Number(b.split('_')[1]));
    let n = 0;
    for (const key of sessions) {
      for (const turn of conv[key] as { speaker: string; dia_id: string; text: string }[]) {
        const ts = new Date(Date.UTC(2023, 4, 1) + n++ * 60_000).toISOString();
        const message = {
          messageId: messageUuid('platform_a', 'locomo-conv-26', turn.dia_id),
          platform: 'platform_a' as const,
          workspaceId: 'locomo',
          channelId: 'locomo-conv-26',
          channelName: 'conv-26',
          platformMessageId: turn.dia_id,
          text: turn.text,
          author: { id: turn.speaker.toLowerCase(), name: turn.speaker, isBot: false },
          timestamp: ts,
          threadTs: null,
          replyToId: null,
          subtype: null,
          reactions: [],
          attachments: [],
          mentions: [],
          editedAt: null,
          permalink: `locomo://conv-26/${turn.dia_id}`,
          contentHash: turn.dia_id,
          source: 'import' as const,
        };
        const kept = selectFacts(facts.extractSync({ message, thread: null }), 0.5);
        if (kept.length === 0) continue;
        const out = extractor.extractSync({
          facts: {
            messageId: message.messageId,
            platform: 'platform_a',
            channelId: message.channelId,
            sourceMessageId: turn.dia_id,
            extractor: facts.id,
            extractedAt: ts,
            facts: kept,
            sourceText: turn.text,
            contextText: '',
          },
          people,
          decisions: [],
        });
        for (const r of out.relationships)
          expect(
            out.entities.some((e) => e.entityId === r.sourceId) && out.entities.some((e) => e.entityId === r.targetId),
          ).toBe(true);
        people = [...people, ...out.people.filter((p) => !people.some((q) => q.name === p.name))];
        for (const e of out.entities) names.set(e.entityId, e.name);
        for (const r of out.relationships)
          if (r.type === 'PARTICIPATED_IN')
            relationships.push({ who: names.get(r.sourceId)!, what: names.get(r.targetId)! });
      }
    }
    const events = (who: string) => relationships.filter((r) => r.who === who).map((r) => r.what);
    expect(events('Caroline').some((e) => /parade/.test(e))).toBe(true);
    expect(events('Caroline').some((e) => /conference|workshop|program/.test(e))).toBe(true);
    expect(events('Melanie').some((e) => /class/.test(e))).toBe(true);
    expect(events('Melanie').some((e) => /race/.test(e))).toBe(true);
    expect(events('Melanie')).toContain('camping trip');
    expect(relationships.length).toBeGreaterThanOrEqual(15);
  });
});
