import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type ChannelDiscovered, type MessageIngested, messageUuid } from '@atlas/core';
import { MONTHS } from './entities/offline/text.js';

// The LoCoMo long-conversation set (`shared/data/locomo`, beside the checkout) read as Atlas events, for the tests and
// the benchmarks (`@atlas/pipeline/testing`; not used at run time).

/** One LoCoMo question with its gold evidence (dialogue ids such as `D1:3`). */
export interface LocomoQuestion {
  conversation: string;
  channelId: string;
  question: string;
  category: number;
  evidence: string[];
  /**
   * The evidence a third-party audit of LoCoMo's gold labels gives instead (`locomo-audit-errors.json`'s
   * `correct_evidence`, data/locomo/SOURCE.md), when loadLocomo was given the audit and it corrects this question's
   * evidence; absent otherwise. A second opinion (an LLM's, reviewed by people), scored beside the original.
   */
  auditedEvidence?: string[];
}

export interface LocomoSet {
  channels: ChannelDiscovered[];
  messages: MessageIngested[];
  questions: LocomoQuestion[];
}

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

/** "1:56 pm on 8 May, 2023" → ms since epoch (UTC). */
export const parseLocomoTime = (s: string): number => {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(s);
  if (!m) throw new Error(`unparsable LoCoMo time: ${s}`);
  const hour = (Number(m[1]) % 12) + (m[3]!.toLowerCase() === 'pm' ? 12 : 0);
  const month = MONTHS.indexOf(m[5]!.toLowerCase());
  return Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]));
};

/** Dialogue ids of an evidence list: entries split on `;`, `,` and spaces, kept when they read `D<session>:<turn>`. */
const dialogueIds = (evidence: readonly string[]): string[] =>
  evidence.flatMap((e) => e.split(/[;,\s]+/)).filter((e) => /^D\d+:\d+$/.test(e));

/** One entry of the LoCoMo audit (github.com/dial481/locomo-audit `errors.json`); only the fields read here. */
interface AuditEntry {
  question: string;
  category: number;
  cited_evidence?: string[];
  correct_evidence?: string[];
}

/**
 * The audit's corrected evidence by question: an entry applies to the question with its text, category and cited
 * evidence (the audit's `question_id` indexes the ten-conversation file, which a subset does not keep, so the entry is
 * matched by content); an entry that matches no question or more than one, or corrects nothing, is skipped.
 */
const applyAudit = (questions: LocomoQuestion[], file: string): void => {
  const key = (question: string, category: number, evidence: readonly string[]) =>
    `${category}\u0000${question.trim()}\u0000${[...evidence].sort().join(',')}`;
  const byKey = new Map<string, LocomoQuestion[]>();
  for (const q of questions) {
    const k = key(q.question, q.category, q.evidence);
    byKey.set(k, [...(byKey.get(k) ?? []), q]);
  }
  for (const e of JSON.parse(readFileSync(file, 'utf8')) as AuditEntry[]) {
    const matches = byKey.get(key(e.question, e.category, dialogueIds(e.cited_evidence ?? [])));
    const corrected = dialogueIds(e.correct_evidence ?? []);
    if (matches?.length !== 1 || corrected.length === 0) continue;
    const q = matches[0]!;
    if ([...corrected].sort().join(',') !== [...q.evidence].sort().join(',')) q.auditedEvidence = corrected;
  }
};

/**
 * LoCoMo as channels (data/README.md): one channel per conversation, one message per turn, the
 * message time from `session_N_date_time` plus the turn index (seconds), author = speaker, image
 * captions appended to the text. Questions of categories 1 to 4 (5 is adversarial) are kept. `opts.audit`: the path of
 * the audit's `locomo-audit-errors.json`, whose corrected evidence is then set as `auditedEvidence` (applyAudit).
 */
export const loadLocomo = (file: string, opts: { audit?: string } = {}): LocomoSet => {
  const data = JSON.parse(readFileSync(file, 'utf8')) as {
    sample_id: string;
    conversation: Record<string, unknown>;
    qa: { question: string; evidence: string[]; category: number }[];
  }[];
  const out: LocomoSet = { channels: [], messages: [], questions: [] };
  for (const conv of data) {
    const channelId = `locomo-${conv.sample_id}`;
    out.channels.push({
      platform: 'platform_a',
      workspaceId: 'locomo',
      workspaceName: 'locomo',
      channelId,
      name: conv.sample_id,
      isPrivate: false,
      memberCount: 2,
      topic: null,
      createdAt: null,
      source: 'import',
    });
    const sessions = Object.keys(conv.conversation)
      .filter((k) => /^session_\d+$/.test(k))
      .sort((a, b) => Number(a.split('_')[1]) - Number(b.split('_')[1]));
    for (const key of sessions) {
      const base = parseLocomoTime(String(conv.conversation[`${key}_date_time`]));
      (conv.conversation[key] as Turn[]).forEach((turn, i) => {
        const text = turn.blip_caption ? `${turn.text} [image: ${turn.blip_caption}]` : turn.text;
        out.messages.push({
          messageId: messageUuid('platform_a', channelId, turn.dia_id),
          platform: 'platform_a',
          workspaceId: 'locomo',
          channelId,
          channelName: conv.sample_id,
          platformMessageId: turn.dia_id,
          text,
          author: { id: turn.speaker.toLowerCase(), name: turn.speaker, isBot: false },
          timestamp: new Date(base + i * 1000).toISOString(),
          threadTs: null,
          replyToId: null,
          subtype: null,
          reactions: [],
          attachments: [],
          mentions: [],
          editedAt: null,
          permalink: `locomo://${conv.sample_id}/${turn.dia_id}`,
          contentHash: createHash('sha256').update(text).digest('hex'),
          source: 'import',
        });
      });
    }
    for (const q of conv.qa) {
      if (q.category < 1 || q.category > 4) continue;
      const evidence = dialogueIds(q.evidence);
      if (evidence.length === 0) continue;
      out.questions.push({
        conversation: conv.sample_id,
        channelId,
        question: q.question,
        category: q.category,
        evidence,
      });
    }
  }
  if (opts.audit) applyAudit(out.questions, opts.audit);
  return out;
};
