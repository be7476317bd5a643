import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadLocomo } from './locomo.js';

const DIR = path.resolve(import.meta.dirname, '../../../../shared/data/locomo');
const plain = loadLocomo(path.join(DIR, 'locomo-dev.json'));
const audited = loadLocomo(path.join(DIR, 'locomo-dev.json'), { audit: path.join(DIR, 'locomo-audit-errors.json') });
const find = (set: typeof plain, question: string) => set.questions.find((q) => q.question === question)!;

describe('loadLocomo with the audit of its gold evidence', () => {
  it('sets the corrected evidence beside the original where the audit cites other turns', () => {
    const q = find(audited, 'When did Melanie paint a sunrise?');
    expect(q.evidence).toEqual(['D1:12']);
    expect(q.auditedEvidence).toEqual(['D1:14']);
    expect(find(plain, 'When did Melanie paint a sunrise?').auditedEvidence).toBeUndefined();
  });

  it('leaves a question alone when the audit faults its answer but keeps its evidence', () => {
    const q = find(audited, 'What fields would Caroline be likely to pursue in her educaton?');
    expect(q.evidence).toEqual(['D1:9', 'D1:11']);
    expect(q.auditedEvidence).toBeUndefined();
  });

  it('changes nothing else: the same questions and evidence, a minority corrected', () => {
    expect(audited.questions.map((q) => [q.question, q.evidence])).toEqual(
      plain.questions.map((q) => [q.question, q.evidence]),
    );
    const corrected = audited.questions.filter((q) => q.auditedEvidence);
    expect(corrected.length).toBeGreaterThan(20);
    expect(corrected.length).toBeLessThan(audited.questions.length / 10);
    for (const q of corrected) for (const id of q.auditedEvidence!) expect(id).toMatch(/^D\d+:\d+$/);
  });
});
