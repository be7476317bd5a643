/*
 * Freshness marks (issue 27 point 3; docs/ask.md "Freshness"): how current an answer, a search or a wiki page is.
 * Dependency-free on purpose: the web UI imports this file (`@atlas/core/freshness`) for the same wording.
 */

/** One channel an answer draws on: its newest message in the read store, and its messages not yet read through. */
export interface ChannelFreshness {
  channel_id: string;
  /** ISO 8601 UTC time of the channel's newest live message the read store holds; null when it holds none. */
  newest_message_at: string | null;
  /** Messages of the channel appended to the log that the projectors have not all read through yet (≥ 0). */
  pending_messages: number;
}

/**
 * How current a response is: `current_to` the newest `newest_message_at` of its channels (null when none holds a
 * message), `pending_messages` their sum, `behind` whether it is above 0, `channels` each channel (only channels the
 * caller may see), `summary` the one-line wording of freshnessText in UTC.
 */
export interface Freshness {
  current_to: string | null;
  pending_messages: number;
  behind: boolean;
  channels: ChannelFreshness[];
  summary: string;
}

/** The aggregate of per-channel marks (Freshness without the summary wording); pure. */
export const freshnessOf = (channels: readonly ChannelFreshness[]): Omit<Freshness, 'summary'> => {
  let current: string | null = null;
  let pending = 0;
  for (const c of channels) {
    if (c.newest_message_at && (current === null || Date.parse(c.newest_message_at) > Date.parse(current)))
      current = c.newest_message_at;
    pending += c.pending_messages;
  }
  return { current_to: current, pending_messages: pending, behind: pending > 0, channels: [...channels] };
};

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Year, month (1-12), day, hour and minute of `ms` in `timeZone` (IANA; undefined: the runtime's). */
const partsIn = (ms: number, timeZone: string | undefined) => {
  const f = new Intl.DateTimeFormat('en-US', {
    timeZone,
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
  const p = Object.fromEntries(f.formatToParts(ms).map((x) => [x.type, x.value]));
  return { y: Number(p.year), mo: Number(p.month), d: Number(p.day), h: p.hour ?? '00', mi: p.minute ?? '00' };
};

/**
 * A time as a reader says it: `14:02` on `now`'s day, `3 Mar 14:02` in `now`'s year, else `3 Mar 2024 14:02`, in
 * `timeZone` (IANA name; undefined: the runtime's own, the browser's in the web UI). Pure given `now`.
 */
export const freshnessTime = (iso: string, opts: { now?: Date; timeZone?: string } = {}): string => {
  const at = partsIn(Date.parse(iso), opts.timeZone);
  const today = partsIn((opts.now ?? new Date()).getTime(), opts.timeZone);
  const clock = `${at.h}:${at.mi}`;
  if (at.y === today.y && at.mo === today.mo && at.d === today.d) return clock;
  const day = `${at.d} ${MONTHS[at.mo - 1]}`;
  return at.y === today.y ? `${day} ${clock}` : `${day} ${at.y} ${clock}`;
};

/**
 * The freshness mark in a few words (the API's `summary`, the web UI's and the bot's line): "current to 14:02" when
 * caught up, "current to 14:02, 3 messages still being read" while projectors are behind, "nothing read yet" (with the
 * pending count when there is one) before any message is stored. `zoneLabel` follows the time (the API and the bot say
 * "UTC"). Pure given `now`.
 */
export const freshnessText = (
  f: Pick<Freshness, 'current_to' | 'pending_messages'>,
  opts: { now?: Date; timeZone?: string; zoneLabel?: string } = {},
): string => {
  const head =
    f.current_to === null
      ? 'nothing read yet'
      : `current to ${freshnessTime(f.current_to, opts)}${opts.zoneLabel ? ` ${opts.zoneLabel}` : ''}`;
  if (f.pending_messages <= 0) return head;
  const n = f.pending_messages;
  return `${head}, ${n.toLocaleString('en-US')} ${n === 1 ? 'message' : 'messages'} still being read`;
};

/** The aggregate with its UTC summary (what the API returns). */
export const withSummary = (f: Omit<Freshness, 'summary'>, now?: Date): Freshness => ({
  ...f,
  summary: freshnessText(f, { timeZone: 'UTC', zoneLabel: 'UTC', ...(now ? { now } : {}) }),
});

/**
 * What the query service asks of freshness (the runtime's reader, services/runtime/src/freshness.ts): marks of
 * `channels` (the channels a response draws on), plus every channel of `behindIn` whose projectors are behind
 * (`'all'`: any channel; a list: a restricted caller's visible channels; absent: none beyond `channels`). The caller
 * passes only channels it may see.
 */
export interface FreshnessPort {
  of(q: { channels: readonly string[]; behindIn?: readonly string[] | 'all' }): Promise<Freshness>;
}
