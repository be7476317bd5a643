/**
 * The conversations of the mock platform (ADAPTER_MOCK, docs/mock-platform.md): templates of realistic team chat
 * (proposals ending in decisions with owners and deadlines, incidents with root causes, releases, questions with
 * answers, review requests, customer feedback, small talk), filled from word banks by a seeded PRNG. Pure: the same
 * random source gives the same conversation.
 */

/** A random source in [0, 1) (seedrandom's PRNG). */
export type Rng = () => number;

/** One message of a generated conversation. */
export interface Turn {
  /** Index into the conversation's cast (0 = who started it). */
  by: number;
  /** Text with `{@n}` where cast member n is mentioned (rendered per platform). */
  text: string;
  /** Minutes after the previous turn (the first: after the conversation's start). */
  after: number;
  /** A reply in the root's thread (platform_a thread reply, platform_b reply to the root). */
  reply: boolean;
  /** Emoji names reacted with, each by some of the cast. */
  reactions?: string[];
}

/** What a channel talks about. */
export type ChannelKind = 'engineering' | 'product' | 'support' | 'announcements' | 'social';

const SERVICES = ['billing-service', 'api-gateway', 'search-indexer', 'auth-service', 'checkout-service', 'notifier'];
const MIGRATIONS: readonly [string, string, string][] = [
  ['Jenkins', 'GitHub Actions', 'the build queue regularly takes 20 minutes'],
  ['Redis 6', 'Redis 7', 'Redis 6 goes out of support in the spring'],
  ['MySQL', 'Postgres', 'we need proper JSON columns for the audit log'],
  ['Webpack', 'Vite', 'local rebuilds take almost a minute'],
  ['Docker Compose', 'Kubernetes', 'staging keeps drifting from production'],
  ['Datadog', 'Grafana', 'the monitoring bill doubled this quarter'],
  ['moment.js', 'date-fns', 'moment.js is deprecated and bloats the bundle'],
  ['REST polling', 'webhooks', 'polling burns most of our partner API quota'],
  ['npm', 'pnpm', 'CI spends four minutes installing dependencies'],
];
const CAUSES = [
  'connection pool on the primary database was capped at 20',
  'new index build locked the orders table',
  'cache TTL was set to 0 in the last config change',
  'retry loop in the payment client had no backoff',
  'disk on the queue broker filled up with old segments',
];
const METRICS = ['pool saturation', 'queue depth', 'cache hit rate', 'disk usage on the brokers', 'p95 latency'];
const FEATURES = [
  'bulk CSV export',
  'SSO with Okta',
  'usage-based billing',
  'the audit log',
  'mobile push notifications',
  'team workspaces',
  'scheduled reports',
];
const OPTIONS: readonly [string, string][] = [
  ['a background job with an email link', 'a synchronous download'],
  ['a per-seat price', 'a usage-based price'],
  ['a settings toggle', 'a per-project option'],
  ['the existing queue', 'a new dedicated worker'],
];
const CUSTOMERS = ['Northwind', 'Globex', 'Initech', 'Umbrella Health', 'Stark Logistics', 'Wayne Foods'];
const RELEASES = ['the March release', 'the next sprint', 'Q3', 'the 2.0 launch', 'the April release'];
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'];
const TASKS: readonly [string, string, string][] = [
  ['rotate the staging database credentials', 'make rotate-creds ENV=staging', 'ops runbook'],
  ['get a copy of production data for debugging', 'scripts/snapshot --anonymize', 'data handbook'],
  ['run the integration tests locally', 'make test-integration', 'README of the monorepo'],
  ['add a new feature flag', 'flags create <name> --team=<team>', 'feature flag guide'],
  ['regenerate the API client', 'npm run codegen', 'API style guide'],
];
const ISSUES: readonly [string, string, string][] = [
  [
    'password reset emails arrive an hour late',
    'their mail gateway greylists new senders',
    'allowlist our sending domain',
  ],
  [
    'invoices show the wrong currency',
    'the billing country was changed mid-cycle',
    'reissue the invoice from the admin panel',
  ],
  [
    'the export times out for large workspaces',
    'a workspace has more than 50k records',
    'use the scheduled export instead',
  ],
  [
    'SAML login loops back to the login page',
    'the IdP sends an expired certificate',
    'upload the renewed certificate in SSO settings',
  ],
];
const SMALL_TALK = [
  'Coffee break anyone? ☕',
  'Anyone up for lunch at noon? Thinking tacos 🌮',
  'The coffee machine on the third floor works again 🎉',
  'Reminder: team photo tomorrow at 11, wear something nice',
  'Happy Friday all! Have a great weekend',
];

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
const between = (rng: Rng, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));
const version = (rng: Rng) => `v${between(rng, 1, 4)}.${between(rng, 0, 14)}.${between(rng, 0, 9)}`;
const t = (by: number, text: string, after: number, reply = true, reactions?: string[]): Turn => ({
  by,
  text,
  after,
  reply,
  ...(reactions ? { reactions } : {}),
});

type Template = (rng: Rng) => Turn[];

const proposal: Template = (rng) => {
  const svc = pick(rng, SERVICES);
  const [from, to, why] = pick(rng, MIGRATIONS);
  const day = pick(rng, DAYS);
  return [
    t(0, `Proposal: should we move ${svc} from ${from} to ${to}? ${why[0]!.toUpperCase()}${why.slice(1)}.`, 0, false),
    t(
      1,
      `I think ${to} is a much better fit, we already use it for ${pick(
        rng,
        SERVICES.filter((x) => x !== svc),
      )} and it was painless.`,
      7,
    ),
    t(2, `What about the migration effort? ${svc} has a lot of custom scripts.`, 12),
    t(0, `Roughly ${between(rng, 2, 4)} days of work, I went through the scripts last week.`, 9),
    t(0, `OK, we decided to switch ${svc} to ${to}. {@3} can you update the runbook by ${day}?`, 20, true, [
      '+1',
      'white_check_mark',
    ]),
    t(3, `Sure, I'll update the runbook and the on-call docs for ${to}.`, 6),
  ];
};

const incident: Template = (rng) => {
  const svc = pick(rng, SERVICES);
  return [
    t(
      0,
      `Heads up: p95 latency of ${svc} jumped to ${between(rng, 900, 4000)} ms after the ${between(rng, 9, 17)}:00 deploy, looking into it.`,
      0,
      false,
      ['eyes'],
    ),
    t(1, `Seeing the same in Grafana, the error rate is at ${between(rng, 2, 9)}%.`, 4),
    t(0, `Root cause: the ${pick(rng, CAUSES)}. Rolled back to ${version(rng)} and latency is back to normal.`, 25),
    t(2, `We should add an alert on ${pick(rng, METRICS)} so we catch this earlier.`, 8),
    t(0, `I'll add the alert and write the postmortem by tomorrow.`, 5, true, ['pray']),
  ];
};

const release: Template = (rng) => {
  const svc = pick(rng, SERVICES);
  const v = version(rng);
  return [
    t(
      0,
      `Released ${svc} ${v} with ${pick(rng, FEATURES)} behind a feature flag. Notes are in the changelog.`,
      0,
      false,
      ['tada', 'rocket'],
    ),
    t(1, `Nice! Does ${v} include the fix for the retry storm {@0}?`, 15),
    t(0, `Yes, that fix landed in ${v} too.`, 4),
  ];
};

const question: Template = (rng) => {
  const [task, cmd, doc] = pick(rng, TASKS);
  return [
    t(0, `How do I ${task}? I could not find it in the wiki.`, 0, false),
    t(1, `You can run \`${cmd}\`, it is described in the ${doc}.`, 11),
    t(0, `That worked, thanks {@1}!`, 6, true, ['raised_hands']),
  ];
};

const review: Template = (rng) => [
  t(0, `{@1} could you review the PR for ${pick(rng, FEATURES)} before the release tomorrow?`, 0, false),
  t(1, `On it, I'll review it right after standup.`, 9),
];

const productDecision: Template = (rng) => {
  const feature = pick(rng, FEATURES);
  const [a, b] = pick(rng, OPTIONS);
  const customer = pick(rng, CUSTOMERS);
  return [
    t(0, `For ${feature} we have two options: ${a} or ${b}. ${customer} asked for it twice this month.`, 0, false),
    t(1, `I'd go with ${a}, it is simpler to ship and easier to support.`, 14),
    t(2, `Agreed, ${b} can come later if customers ask for it.`, 10),
    t(
      0,
      `OK, we decided to ship ${feature} with ${a} in ${pick(rng, RELEASES)}. {@2} owns the implementation.`,
      18,
      true,
      ['white_check_mark'],
    ),
    t(2, `I'll write the tech spec by ${pick(rng, DAYS)}.`, 5),
  ];
};

const feedback: Template = (rng) => {
  const customer = pick(rng, CUSTOMERS);
  return [
    t(
      0,
      `Feedback from ${customer}: they love ${pick(rng, FEATURES)} but onboarding new admins is still confusing.`,
      0,
      false,
    ),
    t(1, `Is that the same issue ${pick(rng, CUSTOMERS)} reported last week?`, 20),
    t(0, `Yes, I'll file a ticket and link both accounts so design can look at it.`, 8),
  ];
};

const roadmap: Template = (rng) => {
  const [f1, f2] = [pick(rng, FEATURES), pick(rng, FEATURES)];
  return [
    t(0, `Roadmap update: ${f1} moves to ${pick(rng, RELEASES)} and ${f2} is now the priority.`, 0, false, ['eyes']),
    t(1, `Who is leading ${f2}?`, 12),
    t(0, `{@2} is leading it, the kickoff is on ${pick(rng, DAYS)}.`, 6),
  ];
};

const ticket: Template = (rng) => {
  const [issue, cause, fix] = pick(rng, ISSUES);
  return [
    t(0, `Ticket from ${pick(rng, CUSTOMERS)}: ${issue}. Has anyone seen this before?`, 0, false),
    t(1, `Yes, it happens when ${cause}. The workaround is to ${fix}.`, 13),
    t(0, `Thanks, I sent the workaround and the customer confirmed it works.`, 30, true, ['tada']),
    t(2, `We decided to add this to the help center article on ${issue.split(' ').slice(0, 2).join(' ')}.`, 15),
  ];
};

const numbers: Template = (rng) => [
  t(
    0,
    `Weekly numbers: ${between(rng, 40, 160)} tickets closed, median first response ${between(rng, 6, 45)} minutes. The on-call rotation switches to {@1} on ${pick(rng, DAYS)}.`,
    0,
    false,
    ['chart_with_upwards_trend'],
  ),
];

const smallTalk: Template = (rng) => [t(0, pick(rng, SMALL_TALK), 0, false, rng() < 0.5 ? ['wave'] : undefined)];

/** Templates of each channel kind with their weights (a conversation picks one by weight). */
const BY_KIND: Record<ChannelKind, readonly [Template, number][]> = {
  engineering: [
    [proposal, 3],
    [incident, 2],
    [release, 2],
    [question, 3],
    [review, 2],
    [smallTalk, 1],
  ],
  product: [
    [productDecision, 3],
    [feedback, 2],
    [roadmap, 2],
    [review, 1],
    [smallTalk, 1],
  ],
  support: [
    [ticket, 4],
    [question, 2],
    [numbers, 1],
    [smallTalk, 1],
  ],
  announcements: [
    [release, 3],
    [roadmap, 2],
    [numbers, 1],
  ],
  social: [
    [smallTalk, 4],
    [question, 1],
    [feedback, 1],
  ],
};

/** Cast members a conversation needs at most (templates mention indices 0..3). */
export const CAST_SIZE = 4;

/** One conversation of a channel of `kind`, chosen and filled by `rng`. */
export const generateConversation = (kind: ChannelKind, rng: Rng): Turn[] => {
  const options = BY_KIND[kind];
  let r = rng() * options.reduce((s, [, w]) => s + w, 0);
  for (const [template, weight] of options) {
    r -= weight;
    if (r < 0) return template(rng);
  }
  return options[0]![0](rng);
};
