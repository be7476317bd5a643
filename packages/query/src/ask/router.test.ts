import { describe, expect, it } from 'vitest';
import { classifyQuestion } from './router.js';

describe('classifyQuestion (regex fast path)', () => {
  it.each([
    ['what did we decide about the database?', 'semantic'],
    ['how do I configure the kafka consumer?', 'semantic'],
    ['who decided to move to postgres?', 'graph'],
    ['which team owns the billing service?', 'graph'],
    ['who works on the ingestion pipeline?', 'graph'],
    ['what is the relationship between auth and billing?', 'both'],
    ['why was it decided by alice and how does it work?', 'both'],
    ['When did Caroline go to the LGBTQ support group?', 'semantic'],
  ])('%s → %s', (q, route) => {
    expect(classifyQuestion(q)).toBe(route);
  });
});
