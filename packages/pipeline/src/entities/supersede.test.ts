import { entityUuid, Supersession } from '@atlas/core';
import { describe, expect, it } from 'vitest';
import type { KnownDecision } from './port.js';
import {
  choicesOf,
  findSupersessions,
  MAX_SUPERSESSIONS_PER_DECISION,
  type NewDecision,
  replacementCue,
} from './supersede.js';

let n = 0;
/** A decision of the channel; ids are derived from the name so that tests read by name. */
const decision = (name: string, topicKeys: string[], messageTs: string, decidedBy = 'alice'): KnownDecision => ({
  entityId: entityUuid('C1', 'Decision', name),
  name,
  factId: entityUuid('C1', 'fact', `${name}#${n++}`),
  messageTs,
  decidedBy,
  topicKeys,
});
const fresh = (
  name: string,
  topicKeys: string[],
  text: string,
  messageTs = '2018-02-09T09:00:00.000Z',
): NewDecision => ({
  ...decision(name, topicKeys, messageTs, 'bob'),
  text,
});

const postgres = decision('Use Postgres for the event log', ['postgres', 'event log'], '2018-02-01T10:00:00.000Z');

describe('findSupersessions (spec "Memory validity")', () => {
  it('is certain on a changed choice in the same slot: a new store for the event log', () => {
    const kafka = fresh(
      'Use Kafka for the event log',
      ['kafka', 'event log'],
      'bob and team will use Kafka for the event log.',
    );
    const [s, ...more] = findSupersessions([kafka], [postgres]);
    expect(more).toEqual([]);
    expect(Supersession.parse(s)).toEqual({
      factId: postgres.factId,
      supersededBy: kafka.factId,
      oldEntityId: postgres.entityId,
      newEntityId: kafka.entityId,
      invalidAt: kafka.messageTs,
      certain: true,
      reason: 'changed choice on event log',
    });
  });

  it('is certain on replacement language naming the earlier choice ("moving from Postgres to MySQL")', () => {
    const mysql = fresh('Move to MySQL', ['postgres', 'mysql'], 'bob and team are moving from Postgres to MySQL.');
    const [s] = findSupersessions([mysql], [postgres]);
    expect(s).toMatchObject({ certain: true, factId: postgres.factId });
    expect(s!.reason).toMatch(/^replaced/);
  });

  it('flags the same topic without replacement language as a potential contradiction (certain=false)', () => {
    const pooling = fresh(
      'Use Postgres with pgbouncer for the event log writers',
      ['postgres', 'pgbouncer', 'event log'],
      'bob and team decided to use Postgres with pgbouncer for the event log writers.',
    );
    const [s] = findSupersessions([pooling], [postgres]);
    expect(s).toMatchObject({ certain: false, factId: postgres.factId, supersededBy: pooling.factId });
  });

  it('is conservative: one shared generic tag is no topic, a restatement is no contradiction', () => {
    const a = decision('Choose a vector', ['vector', 'map'], '2018-02-01T10:00:00.000Z');
    const b = fresh('Use a vector for the queue', ['vector', 'queue'], 'bob chose a vector for the queue.');
    expect(findSupersessions([b], [a])).toEqual([]);
    const again = fresh(
      'Use Postgres for the event log',
      ['postgres', 'event log'],
      'we agreed: Postgres for the event log.',
    );
    expect(findSupersessions([again], [postgres])).toEqual([]);
  });

  it('ignores keys most of the channel’s decisions share (the channel’s own subject, like clojure in #clojure)', () => {
    const earlier = [
      decision('Give clojure a month', ['clojure', 'month'], '2018-02-01T10:00:00.000Z'),
      decision('Abandon Java 7 for clojure', ['java', 'clojure'], '2018-02-02T10:00:00.000Z'),
      decision('Use clojure for scripting', ['clojure', 'scripting'], '2018-02-03T10:00:00.000Z'),
    ];
    const d = fresh(
      'Use clojure.spec for validation',
      ['clojure', 'clojure.spec', 'validation'],
      'bob will use clojure.spec.',
    );
    expect(findSupersessions([d], earlier)).toEqual([]);
    // with a single earlier decision the same shared technology is a topic
    expect(findSupersessions([d], earlier.slice(0, 1))).toHaveLength(1);
  });

  it('treats a newer release of the same project as certain', () => {
    const old = decision('Release boot-tools-deps 0.3.0', ['boot tools deps', 'deps.edn'], '2018-02-01T10:00:00.000Z');
    const d = fresh(
      'Release boot-tools-deps 0.4.1',
      ['boot tools deps', 'clojure'],
      'Decided to release boot-tools-deps 0.4.1.',
    );
    expect(findSupersessions([d], [old])).toEqual([
      expect.objectContaining({ certain: true, reason: 'newer release of boot tools deps' }),
    ]);
  });

  it('only looks back: decisions of the same or a later time are never superseded', () => {
    const d = fresh('Use Kafka for the event log', ['kafka', 'event log'], 'use Kafka.', postgres.messageTs);
    expect(findSupersessions([d], [postgres])).toEqual([]);
  });

  it(`flags at most ${MAX_SUPERSESSIONS_PER_DECISION} earlier decisions, the most recent first`, () => {
    const earlier = ['2018-02-01', '2018-02-02', '2018-02-03', '2018-02-04', '2018-02-05'].map((day, i) =>
      decision(`Use store ${i} for the event log`, [`store${i}`, 'event log', 'event store'], `${day}T10:00:00.000Z`),
    );
    const d = fresh('Use Kafka for the event log', ['kafka', 'event log', 'event store'], 'use Kafka instead.');
    const out = findSupersessions([d], earlier);
    expect(out.map((s) => s.factId)).toEqual([earlier[4]!.factId, earlier[3]!.factId, earlier[2]!.factId]);
  });
});

describe('replacementCue and choicesOf', () => {
  it('finds replacement language and its object', () => {
    expect(replacementCue('bob and team use Kafka instead of Postgres now.')).toMatchObject({ object: 'postgres now' });
    expect(replacementCue('we switched to Kafka.')).toMatchObject({ object: '' });
    expect(replacementCue('bob and team no longer use MongoDB.')).toMatchObject({ object: 'mongodb' });
    expect(replacementCue('alice dropped support for Java 7.')).toMatchObject({ object: 'support for java' });
    expect(replacementCue('alice will use Postgres for the event log.')).toBeNull();
  });

  it('reads the choices of a decision from its technologies and the names written in it', () => {
    expect([...choicesOf(postgres)]).toEqual(['postgres']);
    const d = decision(
      'Release boot-tools-deps 0.4.1',
      ['boot tools deps', 'clojure', 'quick merge'],
      postgres.messageTs,
    );
    expect([...choicesOf(d)].sort()).toEqual(['boot tools deps', 'clojure']);
  });
});
