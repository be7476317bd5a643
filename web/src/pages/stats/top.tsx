import { ArrowDownIcon, ArrowUpIcon } from '@radix-ui/react-icons';
import { Badge, Flex, Grid, Heading, Table, Text } from '@radix-ui/themes';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { api, unwrap } from '../../api/client';
import { formatCount } from '../../api/hooks';
import { Empty, QueryView } from '../../components/states';
import { BarChart, ChartOrTable, ScrollTable, TableCaption } from './bar-chart';

/** Channel names as a short text: the first three and how many more. */
const channelsText = (names: string[]) =>
  names.length <= 3
    ? names.map((n) => `#${n}`).join(', ')
    : `${names
        .slice(0, 3)
        .map((n) => `#${n}`)
        .join(', ')} and ${names.length - 3} more`;

/** A topic's trend (spec "Top topic": rising, else stable or falling) as a badge with an arrow. */
const Trend = ({ trend }: { trend: string }) =>
  trend === 'rising' ? (
    <Badge highContrast color="green" variant="soft">
      <ArrowUpIcon aria-hidden /> rising
    </Badge>
  ) : trend === 'falling' ? (
    <Badge highContrast color="orange" variant="soft">
      <ArrowDownIcon aria-hidden /> falling
    </Badge>
  ) : (
    <Text size="1" color="gray">
      {trend}
    </Text>
  );

/** A ranked list's section: its heading, then loading, error, empty, or `children` with the list; a note below. */
const RankedSection = <T,>({
  id,
  title,
  query,
  empty,
  note,
  children,
}: {
  id: string;
  title: string;
  query: { isPending: boolean; error: unknown; data: T[] | undefined; refetch: () => unknown };
  empty: string;
  note?: string;
  children: (list: T[]) => ReactNode;
}) => (
  <section aria-labelledby={id} style={{ minWidth: 0 }}>
    <Heading as="h2" size="4" mb="2" id={id}>
      {title}
    </Heading>
    <QueryView query={query} label={`Loading ${title.toLowerCase()}`}>
      {(list) => (list.length === 0 ? <Empty title={empty} /> : children(list))}
    </QueryView>
    {note ? (
      <Flex mt="2">
        <Text size="1" color="gray">
          {note}
        </Text>
      </Flex>
    ) : null}
  </section>
);

/**
 * Top authors and top topics (GET /api/stats/top-authors and /api/stats/top-topics, 10 each, spec "Top author",
 * "Top topic"): bar charts of messages per author and facts per topic, each with a table alternative carrying every
 * field (facts, decisions, channels, trend).
 */
export const TopCharts = () => {
  const authors = useQuery({
    queryKey: ['stats', 'top-authors'],
    queryFn: () => unwrap(api.GET('/api/stats/top-authors', { params: { query: { limit: 10 } } })),
  });
  const topics = useQuery({
    queryKey: ['stats', 'top-topics'],
    queryFn: () => unwrap(api.GET('/api/stats/top-topics', { params: { query: { limit: 10 } } })),
  });
  return (
    <Grid columns={{ initial: '1', md: '2' }} gap="6">
      <RankedSection id="authors-h" title="Top authors" query={authors} empty="No authors yet.">
        {(list) => (
          <ChartOrTable
            title="top authors"
            chart={
              <BarChart
                label="Top authors by messages"
                bars={list.map((a) => ({
                  key: a.author_id,
                  label: a.author_name,
                  value: a.message_count,
                  unit: a.message_count === 1 ? 'message' : 'messages',
                  detail: `· ${formatCount(a.fact_count)} facts`,
                }))}
              />
            }
            table={
              <ScrollTable label="Top authors">
                <Table.Root size="1" variant="surface">
                  <TableCaption>Top authors</TableCaption>
                  <Table.Header>
                    <Table.Row>
                      <Table.ColumnHeaderCell>Author</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell justify="end">Messages</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell justify="end">Facts</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell justify="end">Decisions</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell>Channels</Table.ColumnHeaderCell>
                    </Table.Row>
                  </Table.Header>
                  <Table.Body>
                    {list.map((a) => (
                      <Table.Row key={a.author_id}>
                        <Table.RowHeaderCell>{a.author_name}</Table.RowHeaderCell>
                        <Table.Cell justify="end">{formatCount(a.message_count)}</Table.Cell>
                        <Table.Cell justify="end">{formatCount(a.fact_count)}</Table.Cell>
                        <Table.Cell justify="end">{formatCount(a.decision_count)}</Table.Cell>
                        <Table.Cell>{channelsText(a.channels)}</Table.Cell>
                      </Table.Row>
                    ))}
                  </Table.Body>
                </Table.Root>
              </ScrollTable>
            }
          />
        )}
      </RankedSection>
      <RankedSection
        id="topics-h"
        title="Top topics"
        query={topics}
        empty="No topics yet."
        note="Trend: the facts of the 7 days up to the newest fact against the 7 days before."
      >
        {(list) => (
          <ChartOrTable
            title="top topics"
            chart={
              <BarChart
                label="Top topics by facts"
                bars={list.map((t) => ({
                  key: t.topic,
                  label: t.topic,
                  value: t.fact_count,
                  unit: t.fact_count === 1 ? 'fact' : 'facts',
                  detail: <Trend trend={t.trend} />,
                }))}
              />
            }
            table={
              <ScrollTable label="Top topics">
                <Table.Root size="1" variant="surface">
                  <TableCaption>Top topics</TableCaption>
                  <Table.Header>
                    <Table.Row>
                      <Table.ColumnHeaderCell>Topic</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell justify="end">Facts</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell>Trend</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell>Channels</Table.ColumnHeaderCell>
                    </Table.Row>
                  </Table.Header>
                  <Table.Body>
                    {list.map((t) => (
                      <Table.Row key={t.topic}>
                        <Table.RowHeaderCell>{t.topic}</Table.RowHeaderCell>
                        <Table.Cell justify="end">{formatCount(t.fact_count)}</Table.Cell>
                        <Table.Cell>
                          <Trend trend={t.trend} />
                        </Table.Cell>
                        <Table.Cell>{channelsText(t.channels)}</Table.Cell>
                      </Table.Row>
                    ))}
                  </Table.Body>
                </Table.Root>
              </ScrollTable>
            }
          />
        )}
      </RankedSection>
    </Grid>
  );
};
