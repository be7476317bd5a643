/**
 * Channel digests (issue 27 point 4): what changed in a channel over a period — decisions made or changed, action
 * items opened, due or overdue, new and growing topics — each line citing the message it rests on. A pure function
 * over the channel's lifecycle items (decisions and action items with their transitions) and its topic counts, so the
 * API, the web UI and the bot render the same digest.
 */

/** The evidence of a lifecycle transition: the message that moved (or opened) an item. */
export interface DigestEvidence {
  messageId: string;
  platformMessageId: string;
  permalink: string;
  authorName: string;
  excerpt: string;
}

/** One transition of a lifecycle item (`from` null for its first state); `at` ISO 8601 UTC message time. */
export interface DigestTransition {
  from: string | null;
  to: string;
  at: string;
  evidence: DigestEvidence;
}

/** A decision or action item with its history (the lifecycle store's item). */
export interface DigestSourceItem {
  itemId: string;
  kind: 'decision' | 'action_item';
  state: string;
  title: string;
  owner: string | null;
  /** YYYY-MM-DD, or null when none is stated. */
  dueDate: string | null;
  transitions: DigestTransition[];
}

/** A topic tag's facts in the period, in the period before, and its first fact (DocumentStore.topicWindow). */
export interface DigestTopicRow {
  tag: string;
  count: number;
  previous: number;
  firstSeen: string;
}

/** A numbered source of a digest (`[n]` in its text). */
export interface DigestCitation {
  id: number;
  message_id: string;
  permalink: string;
  author: string;
  timestamp: string;
  excerpt: string;
}

/** One line of a digest about a lifecycle item. `at`: the transition's time; `citation`: its source's number. */
export interface DigestEntry {
  item_id: string;
  kind: 'decision' | 'action_item';
  title: string;
  state: string;
  /** The state before this period's change (null for an item opened in the period). */
  previous_state: string | null;
  owner: string | null;
  due_date: string | null;
  at: string;
  citation: number;
}

/** A channel's digest for [start, end). */
export interface Digest {
  channel_id: string;
  period: { start: string; end: string; days: number };
  decisions: { made: DigestEntry[]; changed: DigestEntry[] };
  action_items: { opened: DigestEntry[]; closed: DigestEntry[]; due: DigestEntry[]; overdue: DigestEntry[] };
  topics: {
    new: { topic: string; fact_count: number }[];
    growing: { topic: string; fact_count: number; previous_count: number }[];
  };
  citations: DigestCitation[];
  /** Whether anything happened: false for a quiet period. */
  has_activity: boolean;
  /** The digest as Markdown with `[n]` markers (what the bot posts). */
  text: string;
}

/** A topic grows when it has at least this many facts in the period… */
export const GROWING_MIN_FACTS = 3;
/** …and at least this many times the facts of the period before (a topic absent before grows from 0). */
export const GROWING_RATIO = 1.5;
/** At most this many topics of each kind. */
export const DIGEST_TOPICS = 5;
/** Action items due within this many days after the period's end are listed as due. */
export const DUE_AHEAD_DAYS = 7;

const DAY_MS = 86_400_000;

/**
 * Composes the digest of `channelId` for [start, end) (ISO 8601 UTC):
 * - decisions made: a decision whose first state (proposed or decided) or whose move to decided falls in the period;
 *   changed: one superseded or reverted in the period (with the state it left);
 * - action items opened in the period; closed (done or dropped) in it; still open at the end with a due date before
 *   the end (overdue) or within DUE_AHEAD_DAYS after it (due);
 * - topics new in the period (first fact in it), and growing ones (≥ GROWING_MIN_FACTS facts, ≥ GROWING_RATIO times
 *   the period before), DIGEST_TOPICS of each, most facts first;
 * - one citation per message quoted, numbered in the order the text quotes them; each section oldest first.
 * Only transitions at or before `end` count, so the state shown is the state the item had at the end.
 */
export const composeDigest = (input: {
  channelId: string;
  channelName?: string | null;
  start: string;
  end: string;
  items: readonly DigestSourceItem[];
  topics: readonly DigestTopicRow[];
}): Digest => {
  const { start, end } = input;
  const inPeriod = (t: string) => t >= start && t < end;
  // Entries keep their transition until every section is known; citations are then numbered in the text's order.
  type Pending = DigestEntry & { tr: DigestTransition };
  const entry = (item: DigestSourceItem, tr: DigestTransition, stateAtEnd: string): Pending => ({
    item_id: item.itemId,
    kind: item.kind,
    title: item.title,
    state: stateAtEnd,
    previous_state: tr.from,
    owner: item.owner,
    due_date: item.dueDate,
    at: tr.at,
    citation: 0,
    tr,
  });

  const made: Pending[] = [];
  const changed: Pending[] = [];
  const opened: Pending[] = [];
  const closed: Pending[] = [];
  const due: Pending[] = [];
  const overdue: Pending[] = [];
  const endDay = end.slice(0, 10);
  const aheadDay = new Date(Date.parse(end) + DUE_AHEAD_DAYS * DAY_MS).toISOString().slice(0, 10);
  const byTime = [...input.items].sort((a, b) =>
    (a.transitions[0]?.at ?? '').localeCompare(b.transitions[0]?.at ?? ''),
  );
  for (const item of byTime) {
    const known = item.transitions.filter((t) => t.at < end).sort((a, b) => a.at.localeCompare(b.at));
    const last = known.at(-1);
    if (!last) continue; // opened after the period
    const state = last.to;
    const recent = known.filter((t) => inPeriod(t.at));
    if (item.kind === 'decision') {
      const decided = recent.find((t) => t.from === null || t.to === 'decided');
      const change = recent.findLast((t) => t.to === 'superseded' || t.to === 'reverted');
      if (decided) made.push(entry(item, decided, state));
      if (change) changed.push(entry(item, change, state));
    } else {
      const open = recent.find((t) => t.from === null);
      const close = recent.findLast((t) => t.to === 'done' || t.to === 'dropped');
      if (open) opened.push(entry(item, open, state));
      if (close) closed.push(entry(item, close, state));
      if (state === 'open' && item.dueDate) {
        if (item.dueDate < endDay) overdue.push(entry(item, last, state));
        else if (item.dueDate <= aheadDay) due.push(entry(item, last, state));
      }
    }
  }

  const fresh = input.topics
    .filter((t) => inPeriod(t.firstSeen))
    .sort((a, b) => b.count - a.count || a.tag.localeCompare(b.tag))
    .slice(0, DIGEST_TOPICS)
    .map((t) => ({ topic: t.tag, fact_count: t.count }));
  const isNew = new Set(fresh.map((t) => t.topic));
  const growing = input.topics
    .filter(
      (t) => !isNew.has(t.tag) && t.count >= GROWING_MIN_FACTS && t.count >= GROWING_RATIO * Math.max(t.previous, 1),
    )
    .sort((a, b) => b.count - b.previous - (a.count - a.previous) || a.tag.localeCompare(b.tag))
    .slice(0, DIGEST_TOPICS)
    .map((t) => ({ topic: t.tag, fact_count: t.count, previous_count: t.previous }));

  const citations: DigestCitation[] = [];
  const cited = (list: Pending[]): DigestEntry[] =>
    list.map(({ tr, ...e }) => {
      let c = citations.find((x) => x.message_id === tr.evidence.messageId);
      if (!c) {
        c = {
          id: citations.length + 1,
          message_id: tr.evidence.messageId,
          permalink: tr.evidence.permalink,
          author: tr.evidence.authorName,
          timestamp: tr.at,
          excerpt: tr.evidence.excerpt,
        };
        citations.push(c);
      }
      return { ...e, citation: c.id };
    });
  // The text's order (digestText): made, changed, opened, closed, overdue, due.
  const sections = [made, changed, opened, closed, overdue, due].map((l) =>
    cited(l.sort((a, b) => a.at.localeCompare(b.at))),
  );
  const [madeC, changedC, openedC, closedC, overdueC, dueC] = sections as [
    DigestEntry[],
    DigestEntry[],
    DigestEntry[],
    DigestEntry[],
    DigestEntry[],
    DigestEntry[],
  ];

  const days = Math.round((Date.parse(end) - Date.parse(start)) / DAY_MS);
  const digest: Omit<Digest, 'text'> = {
    channel_id: input.channelId,
    period: { start, end, days },
    decisions: { made: madeC, changed: changedC },
    action_items: { opened: openedC, closed: closedC, due: dueC, overdue: overdueC },
    topics: { new: fresh, growing },
    citations,
    has_activity:
      made.length + changed.length + opened.length + closed.length + due.length + overdue.length + fresh.length > 0 ||
      growing.length > 0,
  };
  return { ...digest, text: digestText(digest, input.channelName ?? null) };
};

const line = (e: DigestEntry): string => {
  const who = e.owner ? ` (${e.owner})` : '';
  const dueText = e.due_date ? `, due ${e.due_date}` : '';
  const move = e.previous_state && e.previous_state !== e.state ? `${e.previous_state} → ${e.state}` : e.state;
  return `- ${e.title}${who}: ${move}${dueText} [${e.citation}]`;
};

/**
 * The digest as Markdown: a heading with the channel and the period, then the sections that have entries, and the
 * numbered sources; a quiet period says so in one line.
 */
export const digestText = (d: Omit<Digest, 'text'>, channelName: string | null): string => {
  const name = channelName ? `#${channelName}` : d.channel_id;
  const head = `**Digest of ${name}, ${d.period.start.slice(0, 10)} to ${new Date(Date.parse(d.period.end) - 1).toISOString().slice(0, 10)}**`;
  if (!d.has_activity) return `${head}\n\nNo decision, action item or new topic in this period.`;
  const out = [head];
  const section = (title: string, entries: DigestEntry[]) => {
    if (entries.length) out.push('', `*${title}*`, ...entries.map(line));
  };
  section('Decisions made', d.decisions.made);
  section('Decisions changed', d.decisions.changed);
  section('Action items opened', d.action_items.opened);
  section('Action items closed', d.action_items.closed);
  section('Action items overdue', d.action_items.overdue);
  section(`Action items due in the next ${DUE_AHEAD_DAYS} days`, d.action_items.due);
  if (d.topics.new.length)
    out.push('', `*New topics*: ${d.topics.new.map((t) => `${t.topic} (${t.fact_count})`).join(', ')}`);
  if (d.topics.growing.length)
    out.push(
      '',
      `*Growing topics*: ${d.topics.growing.map((t) => `${t.topic} (${t.previous_count} → ${t.fact_count})`).join(', ')}`,
    );
  if (d.citations.length)
    out.push(
      '',
      '*Sources*',
      ...d.citations.map((c) => `[${c.id}] ${c.author}, ${c.timestamp.slice(0, 10)}: ${c.permalink}`),
    );
  return out.join('\n');
};
