import { Box, Flex, Grid, Heading, Table, Text } from '@radix-ui/themes';
import { useQueries, useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { formatCount, formatTime } from '../../api/hooks';
import type { paths } from '../../api/schema';
import { Empty, ErrorState, Loading } from '../../components/states';
import { type Bar, BarChart, ChartOrTable, ScrollTable, TableCaption } from './bar-chart';
import { ChannelLink, Figure, useChannelNames } from './overview';

const DAY = 86_400_000;

/** The JSON export (GET /api/stats/export?format=json). */
type ExportJson = Exclude<paths['/api/stats/export']['get']['responses'][200]['content']['application/json'], string>;
/** How many channels the 7- and 30-day charts show. */
const TOP = 10;

/** Bars largest first. */
const byValue = (bars: Bar[]) => [...bars].sort((a, b) => b.value - a.value);

/** The export (GET /api/stats/export, JSON) of messages and facts from `days` days ago on, every visible channel. */
const useSince = (days: 7 | 30, now: number) =>
  useQuery({
    queryKey: ['stats', 'export-since', days],
    queryFn: async () =>
      (await unwrap(
        api.GET('/api/stats/export', {
          params: { query: { format: 'json', since: new Date(now - days * DAY).toISOString() } },
        }),
      )) as ExportJson,
    staleTime: 60_000,
  });

/** The 7-day and 30-day counts of a channel's activity (spec "Channel stats (by id)" `activity`). */
type Activity = {
  messages_last_7d: number;
  messages_last_30d: number;
  facts_added_last_7d: number;
  facts_added_last_30d: number;
};

/**
 * One chart of the 30-day window per channel with the last 7 days as its dark inner bar, largest first; `counts`
 * picks [7-day, 30-day] from a channel's activity, `basis` says which time counts (message or extraction time).
 */
const WindowChart = ({
  title,
  basis,
  label,
  rows,
  names,
  counts,
}: {
  title: string;
  basis: string;
  label: string;
  rows: { channel_id: string; stats?: { activity: Activity } | undefined }[];
  names: Map<string, string>;
  counts: (a: Activity) => [number, number];
}) => (
  <Box>
    <Heading as="h3" size="3" mb="1">
      {title}
    </Heading>
    <Text as="p" size="1" color="gray" mb="2">
      Bar: last 30 days; dark part: last 7 days (by {basis}).
    </Text>
    <BarChart
      label={label}
      bars={byValue(
        rows.map((r) => {
          const [d7, d30] = counts(r.stats!.activity);
          return {
            key: r.channel_id,
            label: <ChannelLink id={r.channel_id} names={names} />,
            value: d30,
            inner: d7,
            unit: 'in 30 d',
            detail: `· ${formatCount(d7)} in 7 d`,
          };
        }),
      )}
    />
  </Box>
);

/**
 * 7- and 30-day activity. Totals and the ranking come from two exports with `since` (GET /api/stats/export: messages
 * and facts from that message time on, one row per channel), so every channel is ranked in two requests; the top 10
 * channels by messages of the last 30 days (the largest channels when none has recent messages) are then read from
 * the channel stats (GET /api/stats/channel/{channel_id}: activity {messages_last_7d, messages_last_30d,
 * facts_added_last_7d, facts_added_last_30d}, facts counted by extraction time) and charted, each with a table.
 */
export const ActivityCharts = () => {
  const [now] = useState(() => Date.now());
  const d7 = useSince(7, now);
  const d30 = useSince(30, now);
  const names = useChannelNames();
  const all = useQuery({
    queryKey: ['stats', 'export-all'],
    queryFn: async () =>
      (await unwrap(api.GET('/api/stats/export', { params: { query: { format: 'json' } } }))) as ExportJson,
    staleTime: 60_000,
  });

  const ranked = useMemo(() => {
    if (!d30.data || !all.data) return null;
    const recent = new Map(d30.data.channels.map((c) => [c.channel_id, c.message_count]));
    const rows = all.data.channels.map((c) => ({ ...c, last30: recent.get(c.channel_id) ?? 0 }));
    rows.sort((a, b) => b.last30 - a.last30 || b.message_count - a.message_count);
    return { rows: rows.slice(0, TOP), anyRecent: rows.some((r) => r.last30 > 0) };
  }, [d30.data, all.data]);

  const channelStats = useQueries({
    queries: (ranked?.rows ?? []).map((r) => ({
      queryKey: ['stats', 'channel', r.channel_id],
      queryFn: () =>
        unwrap(api.GET('/api/stats/channel/{channel_id}', { params: { path: { channel_id: r.channel_id } } })),
      staleTime: 60_000,
    })),
  });

  const failed = [d7, d30, all].find((q) => q.error);
  if (failed)
    return (
      <ErrorState
        error={failed.error}
        retry={() => {
          for (const q of [d7, d30, all]) void q.refetch();
        }}
      />
    );
  if (!d7.data || !d30.data || !ranked || !all.data) return <Loading label="Loading activity" />;
  if (all.data.channels.length === 0)
    return <Empty title="No channel yet.">Activity appears once a channel is imported or synced.</Empty>;

  const newest = all.data.channels
    .map((c) => c.latest_message)
    .filter((t): t is string => !!t)
    .sort()
    .at(-1);
  const statsError = channelStats.find((q) => q.error)?.error;
  const rows = ranked.rows.map((r, i) => ({ ...r, stats: channelStats[i]?.data }));
  const loaded = rows.every((r) => r.stats);

  return (
    <Flex direction="column" gap="5">
      <section aria-labelledby="recent-h">
        <Heading as="h2" size="4" mb="2" id="recent-h">
          Last 7 and 30 days
        </Heading>
        <Grid columns={{ initial: '2', sm: '4' }} gap="3">
          <Figure label="Messages, last 7 days" value={formatCount(d7.data.totals.messages)} />
          <Figure label="Messages, last 30 days" value={formatCount(d30.data.totals.messages)} />
          <Figure
            label="Active channels, 7 days"
            value={formatCount(d7.data.channels.filter((c) => c.message_count > 0).length)}
          />
          <Figure
            label="Active channels, 30 days"
            value={formatCount(d30.data.channels.filter((c) => c.message_count > 0).length)}
          />
        </Grid>
        {!ranked.anyRecent ? (
          <Box mt="3">
            <Empty title="No message in the last 30 days.">
              The newest message is from {formatTime(newest)}. Below: the 10 largest channels and the facts added to
              them lately.
            </Empty>
          </Box>
        ) : null}
      </section>

      <section aria-labelledby="channels-h">
        <Heading as="h2" size="4" mb="2" id="channels-h">
          {ranked.anyRecent
            ? `Top ${rows.length} channels by messages of the last 30 days`
            : `Top ${rows.length} channels`}
        </Heading>
        {statsError ? (
          <ErrorState error={statsError} retry={() => channelStats.forEach((q) => void q.refetch())} />
        ) : null}
        {!loaded && !statsError ? <Loading label="Loading channel activity" /> : null}
        {loaded ? (
          <ChartOrTable
            title="channel activity"
            chart={
              <Grid columns={{ initial: '1', md: ranked.anyRecent ? '2' : '1' }} gap="6">
                {ranked.anyRecent ? (
                  <WindowChart
                    title="Messages"
                    basis="message time"
                    label="Messages of the last 30 days per channel"
                    rows={rows}
                    names={names}
                    counts={(a) => [a.messages_last_7d, a.messages_last_30d]}
                  />
                ) : null}
                <WindowChart
                  title="Facts added"
                  basis="extraction time"
                  label="Facts added in the last 30 days per channel"
                  rows={rows}
                  names={names}
                  counts={(a) => [a.facts_added_last_7d, a.facts_added_last_30d]}
                />
              </Grid>
            }
            table={
              <ScrollTable label="Channel activity">
                <Table.Root size="1" variant="surface">
                  <TableCaption>Channel activity</TableCaption>
                  <Table.Header>
                    <Table.Row>
                      <Table.ColumnHeaderCell>Channel</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell justify="end">Messages 7 d</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell justify="end">Messages 30 d</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell justify="end">Facts added 7 d</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell justify="end">Facts added 30 d</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell justify="end">All messages</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell>Newest message</Table.ColumnHeaderCell>
                    </Table.Row>
                  </Table.Header>
                  <Table.Body>
                    {rows.map((r) => (
                      <Table.Row key={r.channel_id}>
                        <Table.RowHeaderCell>
                          <ChannelLink id={r.channel_id} names={names} />
                        </Table.RowHeaderCell>
                        <Table.Cell justify="end">{formatCount(r.stats!.activity.messages_last_7d)}</Table.Cell>
                        <Table.Cell justify="end">{formatCount(r.stats!.activity.messages_last_30d)}</Table.Cell>
                        <Table.Cell justify="end">{formatCount(r.stats!.activity.facts_added_last_7d)}</Table.Cell>
                        <Table.Cell justify="end">{formatCount(r.stats!.activity.facts_added_last_30d)}</Table.Cell>
                        <Table.Cell justify="end">{formatCount(r.stats!.message_count)}</Table.Cell>
                        <Table.Cell>{formatTime(r.stats!.date_range.latest)}</Table.Cell>
                      </Table.Row>
                    ))}
                  </Table.Body>
                </Table.Root>
              </ScrollTable>
            }
          />
        ) : null}
      </section>
    </Flex>
  );
};
