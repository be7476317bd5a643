import { describe, expect, it } from 'vitest';
import { findOwnerChanges, type KnownOwner, ownershipOf } from './ownership.js';

const people = new Set(['alice', 'bob', 'Carol Diaz']);
const isPerson = (n: string) => people.has(n);

describe('ownershipOf', () => {
  it('reads who owns what in active, passive and hand-over phrasings', () => {
    expect(ownershipOf('alice owns the billing service.', isPerson)).toEqual({
      owner: 'alice',
      subject: 'billing service',
      change: false,
    });
    expect(ownershipOf('From now on bob owns the billing service', isPerson)).toEqual({
      owner: 'bob',
      subject: 'billing service',
      change: true,
    });
    expect(ownershipOf('The ingest pipeline is now maintained by Carol Diaz.', isPerson)).toEqual({
      owner: 'Carol Diaz',
      subject: 'ingest pipeline',
      change: true,
    });
    expect(ownershipOf('bob took over the release process from alice', isPerson)).toMatchObject({
      owner: 'bob',
      subject: 'release process',
      change: true,
    });
    expect(ownershipOf('alice handed the on-call rotation over to bob', isPerson)).toMatchObject({
      owner: 'bob',
      subject: 'on-call rotation',
      change: true,
    });
    expect(ownershipOf('alice is the new maintainer of Expound', isPerson)).toMatchObject({
      owner: 'alice',
      subject: 'Expound',
      change: true,
    });
  });

  it('needs a known person as owner and a thing as subject', () => {
    expect(ownershipOf('The scheduler owns the lock', isPerson)).toBeNull(); // no person owns it
    expect(ownershipOf('alice owns it', isPerson)).toBeNull();
    expect(ownershipOf('alice leads bob', isPerson)).toBeNull(); // a person is not a thing owned
    expect(ownershipOf('alice thinks the build is slow', isPerson)).toBeNull();
    expect(ownershipOf('alice leads the infra team', isPerson)).toBeNull(); // people, not a thing
    expect(ownershipOf('bob run the tests again', isPerson)).toBeNull();
    expect(ownershipOf('bob own a Lisp machine, if that helps', isPerson)).toBeNull(); // a possession
    expect(ownershipOf('alice maintains that library these days', isPerson)).toBeNull(); // which one?
    expect(ownershipOf('alice runs into this all the time', isPerson)).toBeNull();
  });
});

describe('findOwnerChanges', () => {
  const old: KnownOwner = {
    subjectKey: 'billing service',
    subject: 'billing service',
    owner: 'alice',
    factId: '00000000-0000-5000-8000-000000000001',
    messageTs: '2024-01-01T00:00:00.000Z',
  };
  const later = (owner: string, change: boolean) => ({
    ...old,
    owner,
    change,
    factId: '00000000-0000-5000-8000-000000000002',
    messageTs: '2024-02-01T00:00:00.000Z',
  });

  it('a later, different owner supersedes the earlier fact: certain when the text says it changed', () => {
    expect(findOwnerChanges([later('bob', true)], [old])).toEqual([
      {
        factId: old.factId,
        supersededBy: '00000000-0000-5000-8000-000000000002',
        oldEntityId: null,
        newEntityId: null,
        invalidAt: '2024-02-01T00:00:00.000Z',
        certain: true,
        reason: 'owner of billing service changed from alice to bob',
      },
    ]);
    expect(findOwnerChanges([later('bob', false)], [old])[0]?.certain).toBe(false); // potential contradiction
  });

  it('the same owner again, another subject, or an earlier statement changes nothing', () => {
    expect(findOwnerChanges([later('Alice', true)], [old])).toEqual([]);
    expect(findOwnerChanges([{ ...later('bob', true), subjectKey: 'search' }], [old])).toEqual([]);
    expect(findOwnerChanges([{ ...later('bob', true), messageTs: '2023-12-01T00:00:00.000Z' }], [old])).toEqual([]);
  });
});
