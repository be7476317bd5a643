import { ExternalLinkIcon } from '@radix-ui/react-icons';
import { Badge, Box, Button, Flex, Heading, Link as RLink, Text } from '@radix-ui/themes';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { ApiError, api, unwrap } from '../api/client';
import { formatTime } from '../api/hooks';
import type { paths } from '../api/schema';
import { safeHref } from './citation';

/** A lifecycle item with its history, as an entity card's `lifecycle` holds it (docs/decisions.md "Item"). */
export type LifecycleItem =
  paths['/api/graph/entities/{ref}/card']['get']['responses'][200]['content']['application/json']['lifecycle'][number];

/** The colour of each lifecycle state's badge (the state is always written out too: not colour alone). */
export const STATE_COLOR: Record<string, 'green' | 'amber' | 'gray' | 'red' | 'blue' | 'orange'> = {
  decided: 'green',
  proposed: 'amber',
  superseded: 'gray',
  reverted: 'red',
  open: 'blue',
  done: 'green',
  dropped: 'gray',
};

/** Items shown before "Show all". */
const FIRST = 5;

/** A title cut to `n` characters at a word, with an ellipsis when cut. */
const short = (s: string, n = 80): string => (s.length <= n ? s : `${s.slice(0, n).replace(/\s+\S*$/, '')}…`);

/**
 * The title of the item that superseded or reverted a decision (GET /api/decisions/{item_id}); "a later decision" while
 * it loads or when the caller may not see it (404).
 */
const useSupersedingTitle = (id: string | null): string | null => {
  const q = useQuery({
    queryKey: ['decision', id],
    enabled: id !== null,
    staleTime: 60_000,
    retry: (n, e) => !(e instanceof ApiError && e.status < 500) && n < 2,
    queryFn: () => unwrap(api.GET('/api/decisions/{item_id}', { params: { path: { item_id: id! } } })),
  });
  return q.data?.title ?? null;
};

/** An item's state as a badge: `decided`, `superseded by “…”`, `reverted`, `proposed`; `open`, `done`, `dropped`. */
export const StateBadge = ({ item }: { item: Pick<LifecycleItem, 'state' | 'superseded_by'> }) => {
  const moved = item.state === 'superseded' || item.state === 'reverted';
  const by = useSupersedingTitle(moved ? item.superseded_by : null);
  const text =
    item.state === 'superseded'
      ? `superseded by ${by ? `“${short(by, 60)}”` : 'a later decision'}`
      : item.state === 'reverted' && item.superseded_by
        ? `reverted by ${by ? `“${short(by, 60)}”` : 'a later decision'}`
        : item.state;
  return (
    <Badge
      highContrast
      color={STATE_COLOR[item.state] ?? 'gray'}
      data-testid="lifecycle-state"
      data-state={item.state}
      title={by ?? undefined}
      style={{ whiteSpace: 'normal', maxWidth: '100%', overflowWrap: 'anywhere' }}
    >
      {text}
    </Badge>
  );
};

/** The in-app address of a message in its channel's messages tab (`?message=`), the message in context. */
const messageUrl = (channelId: string, messageId: string): string =>
  `/channels/${encodeURIComponent(channelId)}/messages?message=${encodeURIComponent(messageId)}`;

/**
 * One item: its state badge, kind, title, owner, due date, and its history oldest first (each transition with its date,
 * the move, the rule, who said it, and links to the cited message in context and on the platform).
 */
const ItemView = ({ item }: { item: LifecycleItem }) => (
  <li data-testid="lifecycle-item" data-item-id={item.id} className="lifecycle-item">
    <Flex direction="column" gap="1">
      <Flex gap="2" align="center" wrap="wrap">
        <StateBadge item={item} />
        <Text size="1" color="gray">
          {item.kind === 'action_item' ? 'action item' : 'decision'}
        </Text>
      </Flex>
      <Text size="2" style={{ overflowWrap: 'anywhere' }}>
        {item.title}
      </Text>
      <Text size="1" color="gray">
        {item.owner ? <>Owner {item.owner}</> : 'No owner stated'}
        {item.due_date ? <> · due {item.due_date}</> : null}
      </Text>
      <ol
        className="lifecycle-history"
        data-testid="lifecycle-history"
        aria-label={`History of “${short(item.title, 40)}”`}
      >
        {item.history.map((t, i) => {
          const href = safeHref(t.evidence.permalink);
          return (
            // biome-ignore lint/suspicious/noArrayIndexKey: transitions in order
            <li key={i}>
              <Text size="1">
                <Text color="gray">{formatTime(t.at)}</Text> {t.from ? `${t.from} → ${t.to}` : t.to}{' '}
                <Text color="gray">
                  ({t.rule}) · {t.evidence.author_name} ·{' '}
                </Text>
                <RLink asChild>
                  <Link to={messageUrl(item.channel_id, t.evidence.message_id)} title={t.evidence.excerpt}>
                    message
                  </Link>
                </RLink>
                {href ? (
                  <>
                    {' '}
                    <RLink
                      href={href}
                      target="_blank"
                      rel="noopener noreferrer"
                      aria-label={`Open the message of ${formatTime(t.at)} on the platform`}
                    >
                      <ExternalLinkIcon aria-hidden />
                    </RLink>
                  </>
                ) : null}
              </Text>
            </li>
          );
        })}
      </ol>
    </Flex>
  </li>
);

/**
 * The decisions and action items an entity card's facts opened (the card's `lifecycle`, issue 27 point 1), newest
 * first: each with its state, owner, due date and history; the first five, then "Show all". Nothing when there are none.
 */
export const LifecycleList = ({ items }: { items: readonly LifecycleItem[] }) => {
  const [all, setAll] = useState(false);
  if (items.length === 0) return null;
  const shown = all ? items : items.slice(0, FIRST);
  return (
    <Box data-testid="entity-card-lifecycle">
      <Heading as="h4" size="2" mb="1">
        Lifecycle ({items.length})
      </Heading>
      <ul className="lifecycle-list">
        {shown.map((i) => (
          <ItemView key={i.id} item={i} />
        ))}
      </ul>
      {items.length > FIRST ? (
        <Button size="1" variant="soft" mt="2" onClick={() => setAll(!all)}>
          {all ? 'Show fewer' : `Show all ${items.length}`}
        </Button>
      ) : null}
    </Box>
  );
};
