import { ChatBubbleIcon } from '@radix-ui/react-icons';
import { Badge, Box, Button, Flex, Heading, Tabs, Text } from '@radix-ui/themes';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, Navigate, useLocation, useNavigate, useParams } from 'react-router';
import { ApiError, api, unwrap } from '../api/client';
import { formatCount, formatTime } from '../api/hooks';
import { Empty, ErrorState, Loading } from '../components/states';
import { DigestTab } from './channel/digest';
import { FactsTab } from './channel/facts';
import { channelKeys, useChannel } from './channel/keys';
import { MessagesTab } from './channel/messages';
import { SettingsTab } from './channel/settings';
import { ScheduleEditor, SyncPanel } from './connections';
import { GraphExplorer } from './graph';
import { WikiView } from './wiki';

/** The workspace's tabs, in order; each is the path segment after the channel id. */
export const CHANNEL_TABS = ['wiki', 'messages', 'facts', 'graph', 'digest', 'sync', 'settings'] as const;
/** The tabs that read an `?as_of=` day (switching between them keeps it). */
const AS_OF_TABS: readonly ChannelTab[] = ['wiki', 'messages', 'facts', 'graph'];
export type ChannelTab = (typeof CHANNEL_TABS)[number];

/** `/channels/:channelId`: opens the workspace at its wiki tab. */
export const ChannelRedirect = () => {
  const { channelId } = useParams();
  return <Navigate to={`/channels/${encodeURIComponent(channelId!)}/wiki`} replace />;
};

const PLATFORM_LABEL: Record<string, string> = { platform_a: 'Slack-like', platform_b: 'Discord-like' };

/** A tab's label with its count (hidden when the count is not known yet). */
const TabLabel = ({ label, count }: { label: string; count?: number | undefined }) => (
  <Flex align="center" gap="2">
    {label}{' '}
    {count === undefined ? null : (
      <Badge size="1" color="gray" variant="soft" highContrast>
        {formatCount(count)}
      </Badge>
    )}
  </Flex>
);

/**
 * The channel workspace (issue 26 point 5; spec "Channel", "Channels"): `/channels/:channelId/:tab` and
 * `/channels/:channelId/wiki/:pageId?`. The header shows the channel's name, platform, connection and last sync, the
 * channel stats (GET /api/channels/{channel_id}/stats: authors, decisions, date range) and "Ask about this channel"
 * (`/ask?channel=`). Tabs, the tab in the URL (Radix Tabs: arrow keys move between them and open them): the wiki
 * (WikiView), messages (threads expanded, `?message=` opens one in context), facts (filters in the URL, `?memory=`
 * highlights one), the graph (GraphExplorer fixed to the channel), sync (SyncPanel and ScheduleEditor) and settings
 * (admins edit; delete the channel's data). The counts in the labels are the detail's message_count, fact_count,
 * entity_count and wiki_page_count. An unknown channel is the API's 404, said plainly.
 */
export const ChannelPage = () => {
  const { channelId: rawId, tab: rawTab, pageId } = useParams();
  const channelId = rawId!;
  const tab: ChannelTab | null = rawTab === undefined ? 'wiki' : (CHANNEL_TABS.find((t) => t === rawTab) ?? null);
  const navigate = useNavigate();
  // The tab a click or arrow key chose at this address, shown at once while the router renders the next one (a
  // transition); any new address (location.key) shows its own tab.
  const location = useLocation();
  const [chosen, setChosen] = useState<{ at: string; tab: ChannelTab } | null>(null);
  const shown = chosen && chosen.at === location.key ? chosen.tab : tab;
  const channel = useChannel(channelId);
  const stats = useQuery({
    queryKey: channelKeys.stats(channelId),
    queryFn: () => unwrap(api.GET('/api/channels/{channel_id}/stats', { params: { path: { channel_id: channelId } } })),
    enabled: channel.isSuccess,
  });
  const base = `/channels/${encodeURIComponent(channelId)}`;

  if (channel.isPending) return <Loading label="Loading the channel" />;
  if (channel.error) {
    if (channel.error instanceof ApiError && channel.error.status === 404)
      return (
        <Empty title="There is no such channel.">
          It may have been deleted, or your key may not see it. <Link to="/">Go to the home page</Link>.
        </Empty>
      );
    return <ErrorState error={channel.error} retry={() => void channel.refetch()} />;
  }
  const c = channel.data;
  if (!tab)
    return (
      <Empty title={`#${c.name} has no tab "${rawTab}".`}>
        <Link to={`${base}/wiki`}>Open its wiki</Link>.
      </Empty>
    );
  const s = stats.data;
  const labels: Record<ChannelTab, { label: string; count?: number }> = {
    wiki: { label: 'Wiki', count: c.wiki_page_count },
    messages: { label: 'Messages', count: c.message_count },
    facts: { label: 'Facts', count: c.fact_count },
    graph: { label: 'Graph', count: c.entity_count },
    digest: { label: 'Digest' },
    sync: { label: 'Sync history' },
    settings: { label: 'Settings' },
  };

  return (
    <Flex direction="column" gap="4">
      <Flex justify="between" align="start" gap="3" wrap="wrap">
        <Flex direction="column" gap="2" style={{ minWidth: 0 }}>
          <Heading as="h1" size="7" style={{ overflowWrap: 'anywhere' }}>
            #{c.name}
          </Heading>
          <Flex gap="2" align="center" wrap="wrap">
            <Badge highContrast color={c.platform === 'platform_a' ? 'indigo' : 'violet'}>
              {PLATFORM_LABEL[c.platform] ?? c.platform}
            </Badge>
            <Badge highContrast color={c.connected ? 'green' : 'gray'}>
              {c.connected ? 'connected' : 'not connected'}
            </Badge>
            <Text size="2" color="gray">
              Last sync <time dateTime={c.last_sync ?? undefined}>{formatTime(c.last_sync)}</time>
            </Text>
          </Flex>
          {s ? (
            <Text size="2" color="gray">
              {formatCount(s.author_count)} authors · {formatCount(s.decision_count)} decisions ·{' '}
              {formatCount(c.topic_count)} topics
              {s.date_range.earliest ? (
                <>
                  {' '}
                  · messages from {formatTime(s.date_range.earliest)} to {formatTime(s.date_range.latest)}
                </>
              ) : null}
            </Text>
          ) : null}
        </Flex>
        <Button asChild>
          <Link to={`/ask?channel=${encodeURIComponent(channelId)}`}>
            <ChatBubbleIcon /> Ask about this channel
          </Link>
        </Button>
      </Flex>
      <Tabs.Root
        value={shown ?? undefined}
        onValueChange={(v) => {
          setChosen({ at: location.key, tab: v as ChannelTab });
          // The day being read (`?as_of=`) goes along to the tabs that read one.
          const asOf = new URLSearchParams(location.search).get('as_of');
          navigate(
            `${base}/${v}${asOf && AS_OF_TABS.includes(v as ChannelTab) ? `?as_of=${encodeURIComponent(asOf)}` : ''}`,
          );
        }}
      >
        <Tabs.List aria-label={`#${c.name} sections`} wrap="wrap">
          {CHANNEL_TABS.map((t) => (
            <Tabs.Trigger key={t} value={t}>
              <TabLabel label={labels[t].label} count={labels[t].count} />
            </Tabs.Trigger>
          ))}
        </Tabs.List>
        <Box pt="4">
          <Tabs.Content value="wiki">
            <WikiView channelId={channelId} {...(pageId ? { pageId } : {})} />
          </Tabs.Content>
          <Tabs.Content value="messages">
            <MessagesTab channelId={channelId} />
          </Tabs.Content>
          <Tabs.Content value="facts">
            <FactsTab channelId={channelId} />
          </Tabs.Content>
          <Tabs.Content value="graph">
            <GraphExplorer channelId={channelId} />
          </Tabs.Content>
          <Tabs.Content value="digest">
            <DigestTab channelId={channelId} newest={s?.date_range.latest ?? null} />
          </Tabs.Content>
          <Tabs.Content value="sync">
            <Flex direction="column" gap="5">
              <SyncPanel channelId={channelId} />
              <ScheduleEditor channelId={channelId} />
            </Flex>
          </Tabs.Content>
          <Tabs.Content value="settings">
            <SettingsTab channelId={channelId} channelName={c.name} />
          </Tabs.Content>
        </Box>
      </Tabs.Root>
    </Flex>
  );
};
