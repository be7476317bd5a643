import { Link1Icon } from '@radix-ui/react-icons';
import { Badge, Box, Button, Callout, Flex, Link as RLink, Text } from '@radix-ui/themes';
import { useInfiniteQuery } from '@tanstack/react-query';
import { type ReactNode, useEffect, useMemo, useRef } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { formatCount, formatTime } from '../../api/hooks';
import type { paths } from '../../api/schema';
import { AsOfControl, AsOfNotice, describeAsOf, parseAsOf } from '../../components/as-of';
import { safeHref } from '../../components/citation';
import { Empty, ErrorState, Loading } from '../../components/states';
import { channelKeys } from './keys';

/** Messages per page (spec "Limits": default 50, max 200). */
export const MESSAGE_PAGE = 50;
/** Messages per page while looking for a `?message=` further back. */
const HUNT_PAGE = 200;
/** How many pages the hunt for a `?message=` reads at most before giving up (with HUNT_PAGE: 10,000 messages). */
const HUNT_MAX_PAGES = 50;

/** A message as GET /api/channels/{channel_id}/messages answers it (spec "Channel message"). */
type Message =
  paths['/api/channels/{channel_id}/messages']['get']['responses'][200]['content']['application/json']['messages'][number];

/** A top-level message with its replies (oldest first), or a run of replies whose thread began further back. */
export interface ThreadGroup {
  root: Message | null;
  threadTs: string | null;
  replies: Message[];
}

/** Whether a message is a reply: its thread_ts names another message (a thread's first message names itself). */
const isReply = (m: Message) => m.thread_ts !== null && m.thread_ts !== m.id;

/**
 * Messages as the tab shows them (threads expanded): top-level messages in the API's order (newest first), each
 * followed by its loaded replies in the order they were written; replies whose first message is not loaded yet (it
 * is older than every loaded page) are grouped by thread at the end, newest thread first.
 */
export const threadGroups = (messages: readonly Message[]): ThreadGroup[] => {
  const ids = new Set(messages.map((m) => m.id));
  const replies = new Map<string, Message[]>();
  for (const m of messages)
    if (isReply(m)) {
      const list = replies.get(m.thread_ts!) ?? [];
      list.push(m);
      replies.set(m.thread_ts!, list);
    }
  const chronological = (list: Message[]) =>
    [...list].sort((a, b) => a.timestamp.localeCompare(b.timestamp) || a.id.localeCompare(b.id));
  const groups: ThreadGroup[] = messages
    .filter((m) => !isReply(m))
    .map((m) => ({ root: m, threadTs: m.id, replies: chronological(replies.get(m.id) ?? []) }));
  const orphans = [...replies.entries()]
    .filter(([ts]) => !ids.has(ts))
    .map(([ts, list]) => ({ root: null, threadTs: ts, replies: chronological(list) }))
    .sort((a, b) => (b.replies[0]?.timestamp ?? '').localeCompare(a.replies[0]?.timestamp ?? ''));
  return [...groups, ...orphans];
};

/** Slack's three escapes (`&amp;`, `&lt;`, `&gt;`) as the characters they stand for (plain text, never parsed as HTML). */
const unescapeSlack = (t: string) => t.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/**
 * One run of message text outside code blocks, as React elements: platform link markup (`<https://…|label>`) becomes
 * a link (http and https only), a channel reference (`<#C123|name>`) `#name`, a mention (`<@U123>`) `@U123`; the rest
 * stays text. Nothing is ever injected as HTML.
 */
const Inline = ({ text }: { text: string }) => {
  const out: ReactNode[] = [];
  const re = /<(https?:\/\/[^|>\s]+)(?:\|([^>]+))?>|<#[A-Z0-9]+\|([^>]+)>|<@([A-Z0-9]+)(?:\|([^>]+))?>/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) out.push(unescapeSlack(text.slice(last, m.index)));
    const href = safeHref(m[1] ? unescapeSlack(m[1]) : null);
    if (href)
      out.push(
        <RLink key={m.index} href={href} target="_blank" rel="noreferrer noopener" underline="always">
          {unescapeSlack(m[2] ?? m[1]!)}
        </RLink>,
      );
    else if (m[3]) out.push(`#${unescapeSlack(m[3])}`);
    else if (m[4]) out.push(`@${unescapeSlack(m[5] ?? m[4])}`);
    else out.push(unescapeSlack(m[0]));
    last = re.lastIndex;
  }
  if (last < text.length) out.push(unescapeSlack(text.slice(last)));
  return <>{out}</>;
};

/** A message's text: code blocks (between ``` fences) in monospace, the rest through Inline; plain text throughout. */
export const MessageText = ({ text }: { text: string }) => {
  const parts = text.split('```');
  return (
    <Text as="div" size="2" mt="1" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
      {parts.map((part, i) =>
        i % 2 === 1 && i < parts.length - 1 ? (
          <pre
            // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one text in order
            key={i}
            style={{
              margin: '4px 0',
              padding: '6px 8px',
              background: 'var(--gray-a3)',
              borderRadius: 4,
              whiteSpace: 'pre-wrap',
              overflowWrap: 'anywhere',
              fontSize: '0.9em',
            }}
          >
            {unescapeSlack(part.replace(/^\n/, '').replace(/\n$/, ''))}
          </pre>
        ) : (
          // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one text in order
          <Inline key={i} text={i % 2 === 1 ? `\`\`\`${part}` : part} />
        ),
      )}
    </Text>
  );
};

/** An attachment's name and link (spec "Channel message": element shape not shown; the API gives name and url). */
const Attachment = ({ a }: { a: Record<string, unknown> }) => {
  const name = typeof a.name === 'string' && a.name ? a.name : 'attachment';
  const href = safeHref(typeof a.url === 'string' ? a.url : null);
  return href ? (
    <RLink href={href} target="_blank" rel="noreferrer noopener" size="1">
      {name}
    </RLink>
  ) : (
    <Text size="1">{name}</Text>
  );
};

/** One message: author, time, its text as plain text, reactions, attachments and its in-app link. */
const MessageItem = ({
  m,
  base,
  highlighted,
  replyCount,
}: {
  m: Message;
  base: string;
  highlighted: boolean;
  replyCount?: number;
}) => (
  <article
    id={`message-${m.id}`}
    aria-label={`${m.author.name}, ${formatTime(m.timestamp)}`}
    aria-current={highlighted ? 'true' : undefined}
    data-message-id={m.id}
    tabIndex={highlighted ? -1 : undefined}
    style={{
      padding: '8px 10px',
      borderRadius: 6,
      background: highlighted ? 'var(--amber-a4)' : undefined,
      outline: highlighted ? '2px solid var(--amber-9)' : undefined,
    }}
  >
    <Flex gap="2" align="baseline" wrap="wrap">
      <Text weight="bold" size="2">
        {m.author.name}
      </Text>
      <Text size="1" color="gray">
        <time dateTime={m.timestamp}>{formatTime(m.timestamp)}</time>
      </Text>
      {highlighted ? (
        <Badge color="amber" highContrast size="1">
          linked message
        </Badge>
      ) : null}
      <RLink asChild size="1" ml="auto">
        <Link
          to={`${base}/messages?message=${encodeURIComponent(m.id)}`}
          aria-label={`Link to this message by ${m.author.name}`}
        >
          <Link1Icon aria-hidden="true" /> Link
        </Link>
      </RLink>
    </Flex>
    <MessageText text={m.text} />
    {m.reactions.length || m.attachments.length || replyCount ? (
      <Flex gap="2" mt="1" wrap="wrap" align="center">
        {replyCount ? (
          <Badge color="blue" variant="soft" highContrast size="1">
            {replyCount === 1 ? '1 reply' : `${formatCount(replyCount)} replies`}
          </Badge>
        ) : null}
        {m.reactions.map((r) => (
          <Badge key={r.emoji} color="gray" variant="surface" size="1" title={r.users.join(', ')}>
            :{r.emoji}: {r.count}
          </Badge>
        ))}
        {m.attachments.map((a, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: attachments have no guaranteed id
          <Attachment key={i} a={a} />
        ))}
      </Flex>
    ) : null}
  </article>
);

/**
 * The channel's messages (spec "Channel message", "GET /api/channels/{channel_id}/messages"): pages of 50, newest
 * first, "Load older messages" for the next page (next_cursor as `before`). Threads are expanded: a thread's first
 * message shows its reply count and its replies under it, indented. Text is rendered as plain text, never HTML.
 * `?message=<id>` (the search screen's "message in context") reads older pages until that message (and, for a reply,
 * its thread's first message) is loaded, then scrolls to it and highlights it. `?as_of=` (a day, read as its end in
 * UTC, or an instant; AsOf, issue 27 point 2) lists the messages written by then (the route's `as_of`), under an
 * amber notice with the way back to now.
 */
export const MessagesTab = ({ channelId }: { channelId: string }) => {
  const [params, setParams] = useSearchParams();
  const target = params.get('message');
  const asOf = parseAsOf(params.get('as_of'));
  const base = `/channels/${encodeURIComponent(channelId)}`;
  const hunting = useRef(false);
  const query = useInfiniteQuery({
    queryKey: channelKeys.messages(channelId, asOf?.instant ?? null),
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      unwrap(
        api.GET('/api/channels/{channel_id}/messages', {
          params: {
            path: { channel_id: channelId },
            query: {
              limit: hunting.current ? HUNT_PAGE : MESSAGE_PAGE,
              ...(pageParam ? { before: pageParam } : {}),
              ...(asOf ? { as_of: asOf.instant } : {}),
            },
          },
        }),
      ),
    getNextPageParam: (last) => (last.has_more && last.next_cursor ? last.next_cursor : undefined),
  });
  const messages = useMemo(() => query.data?.pages.flatMap((p) => p.messages) ?? [], [query.data]);
  const groups = useMemo(() => threadGroups(messages), [messages]);
  const found = target ? messages.find((m) => m.id === target) : undefined;
  const needParent = found && isReply(found) && !messages.some((m) => m.id === found.thread_ts);
  const pages = query.data?.pages.length ?? 0;
  const hunt = Boolean(target) && (!found || Boolean(needParent)) && query.hasNextPage && pages < HUNT_MAX_PAGES;

  // Read older pages until the linked message (and its thread's start) is loaded.
  useEffect(() => {
    hunting.current = hunt;
    if (hunt && !query.isFetchingNextPage && !query.error) void query.fetchNextPage();
  }, [hunt, query.isFetchingNextPage, query.error, query.fetchNextPage]);

  // Once it is there, bring it into view (once per target).
  const scrolled = useRef<string | null>(null);
  useEffect(() => {
    if (!target || !found || hunt || scrolled.current === target) return;
    const el = document.getElementById(`message-${target}`);
    if (!el) return;
    scrolled.current = target;
    el.scrollIntoView({ block: 'center' });
    el.focus({ preventScroll: true });
  }, [target, found, hunt]);

  /** Sets or clears `?as_of=` (a day), keeping the other parameters. */
  const setAsOf = (day: string | null) => {
    const next = new URLSearchParams(params);
    if (day) next.set('as_of', day);
    else next.delete('as_of');
    setParams(next);
  };
  const header = (
    <>
      {asOf ? (
        <AsOfNotice
          asOf={asOf}
          what="messages"
          detail="those written by then, each in the text it had then (as far as Atlas saw it)."
          testId="messages-as-of"
          onBack={() => setAsOf(null)}
        />
      ) : null}
      <AsOfControl value={asOf} onChange={setAsOf} clearable={false} />
    </>
  );

  if (query.isPending) return <Loading label="Loading messages" />;
  if (query.error && !query.data) return <ErrorState error={query.error} retry={() => void query.refetch()} />;
  if (messages.length === 0)
    return (
      <Flex direction="column" gap="3">
        {header}
        {asOf ? (
          <Empty title={`No messages yet as of ${describeAsOf(asOf)}.`}>
            The channel's first message was written later.
          </Empty>
        ) : (
          <Empty title="No messages yet.">Messages appear here after the channel's first sync or import.</Empty>
        )}
      </Flex>
    );

  return (
    <Flex direction="column" gap="3">
      {header}
      {target && hunt ? (
        <Callout.Root color="blue" role="status">
          <Callout.Text>
            Looking for the linked message in older pages ({formatCount(messages.length)} read)…
          </Callout.Text>
        </Callout.Root>
      ) : target && !found ? (
        <Callout.Root color="amber" role="status">
          <Callout.Text>
            {asOf
              ? `The linked message is not among this channel's messages as of ${describeAsOf(asOf)} (it may be later, or deleted).`
              : "The linked message is not in this channel's messages (it may have been deleted)."}{' '}
            <Link to={`${base}/messages`}>Show the newest messages</Link>
          </Callout.Text>
        </Callout.Root>
      ) : null}
      <Text size="2" color="gray">
        Newest first; replies under the message that started their thread. Showing {formatCount(messages.length)}{' '}
        messages.
      </Text>
      <Box asChild>
        <ol aria-label="Messages" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {groups.map((g) => (
            <li
              key={g.root ? g.root.id : `thread-${g.threadTs}`}
              style={{ borderBottom: '1px solid var(--gray-a4)', padding: '4px 0' }}
            >
              {g.root ? (
                <MessageItem m={g.root} base={base} highlighted={g.root.id === target} replyCount={g.replies.length} />
              ) : (
                <Text as="p" size="1" color="gray" style={{ margin: '4px 10px' }}>
                  Replies in a thread that started before the loaded messages ({g.replies.length}):
                </Text>
              )}
              {g.replies.length ? (
                <ol
                  aria-label={g.root ? `Replies to ${g.root.author.name}` : 'Replies to an earlier message'}
                  style={{
                    listStyle: 'none',
                    margin: '0 0 4px 14px',
                    padding: '0 0 0 10px',
                    borderLeft: '2px solid var(--accent-a6)',
                  }}
                >
                  {g.replies.map((r) => (
                    <li key={r.id}>
                      <MessageItem m={r} base={base} highlighted={r.id === target} />
                    </li>
                  ))}
                </ol>
              ) : null}
            </li>
          ))}
        </ol>
      </Box>
      {query.error ? <ErrorState error={query.error} retry={() => void query.fetchNextPage()} /> : null}
      {query.hasNextPage ? (
        <Flex>
          <Button variant="soft" onClick={() => void query.fetchNextPage()} loading={query.isFetchingNextPage}>
            Load older messages
          </Button>
        </Flex>
      ) : (
        <Text size="2" color="gray">
          That is the channel's first message.
        </Text>
      )}
    </Flex>
  );
};
