import {
  ChatBubbleIcon,
  CheckCircledIcon,
  CrossCircledIcon,
  FileTextIcon,
  Link2Icon,
  ReloadIcon,
  Share1Icon,
} from '@radix-ui/react-icons';
import { Badge, Box, Button, Card, Flex, Grid, Heading, Link as RLink, Text } from '@radix-ui/themes';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { formatCount, formatTime, useChannels } from '../../api/hooks';
import type { paths } from '../../api/schema';
import { Empty, QueryView } from '../../components/states';

/** A labelled figure (a group named by its label, so tests and screen readers find "Messages: 8,198"). */
export const Figure = ({ label, value, hint }: { label: string; value: ReactNode; hint?: ReactNode }) => (
  <Card role="group" aria-label={label}>
    <Text as="div" size="1" color="gray">
      {label}
    </Text>
    <Text as="div" size="6" weight="bold">
      {value}
    </Text>
    {hint ? (
      <Text as="div" size="1" color="gray">
        {hint}
      </Text>
    ) : null}
  </Card>
);

/** Colour of a metric quality band (spec "Metric quality bands"). */
const BAND_COLOR = { excellent: 'green', good: 'teal', fair: 'amber', poor: 'red' } as const;

/** A band word as a badge, or "not rated" when the API has nothing to rate yet. */
const BandBadge = ({ band }: { band: keyof typeof BAND_COLOR | null }) =>
  band ? (
    <Badge highContrast color={BAND_COLOR[band]} variant="soft">
      {band}
    </Badge>
  ) : (
    <Badge highContrast color="gray" variant="soft">
      not rated yet
    </Badge>
  );

/** The channel names by id (for the feed), from GET /api/channels. */
export const useChannelNames = (): Map<string, string> => {
  const channels = useChannels();
  return new Map((channels.data ?? []).map((c) => [c.id, c.name]));
};

/** A link to a channel's workspace named `#name` (the id when the caller does not see its name). */
export const ChannelLink = ({ id, names }: { id: string; names: Map<string, string> }) => (
  <RLink asChild>
    <Link to={`/channels/${encodeURIComponent(id)}`}>#{names.get(id) ?? id}</Link>
  </RLink>
);

type Activity =
  paths['/api/stats/activity']['get']['responses'][200]['content']['application/json']['activities'][number];

const ACTIVITY: Record<Activity['type'], { label: string; icon: ReactNode; color: 'green' | 'red' | 'blue' | 'gray' }> =
  {
    sync_completed: { label: 'Sync completed', icon: <ReloadIcon />, color: 'blue' },
    wiki_generated: { label: 'Wiki generated', icon: <FileTextIcon />, color: 'green' },
    connection_established: { label: 'Connection established', icon: <Link2Icon />, color: 'green' },
    connection_failed: { label: 'Connection failed', icon: <CrossCircledIcon />, color: 'red' },
    fact_extracted: { label: 'Facts extracted', icon: <ChatBubbleIcon />, color: 'gray' },
    entity_created: { label: 'Entities created', icon: <Share1Icon />, color: 'gray' },
  };

const plural = (n: number, one: string, many = `${one}s`) => `${formatCount(n)} ${n === 1 ? one : many}`;

/** What an activity entry says besides its type and time (spec "Activity feed"). */
const activityText = (a: Activity): string | undefined => {
  switch (a.type) {
    case 'sync_completed':
      return `${plural(a.message_count, 'message')} synced, ${plural(a.fact_count, 'fact')}, ${plural(a.entity_count, 'entity', 'entities')}`;
    case 'wiki_generated':
      return `version ${a.version_number}, ${plural(a.page_count, 'page')}`;
    case 'fact_extracted':
      return `${plural(a.fact_count, 'fact')} from ${plural(a.message_count, 'message')}`;
    case 'entity_created':
      return `${plural(a.entity_count, 'entity', 'entities')} from ${plural(a.message_count, 'message')}`;
    case 'connection_established':
    case 'connection_failed':
      return a.platform === 'platform_a' ? 'Slack-like platform' : 'Discord-like platform';
  }
};

/**
 * The activity feed (GET /api/stats/activity, spec "Activity feed": sync_completed, wiki_generated,
 * connection_established, connection_failed, fact_extracted, entity_created), newest first: 20 entries, "show more"
 * asks for up to 100. Refreshed every 30 s.
 */
export const ActivityFeed = () => {
  const [limit, setLimit] = useState(20);
  const names = useChannelNames();
  const feed = useQuery({
    queryKey: ['stats', 'activity', limit],
    queryFn: () => unwrap(api.GET('/api/stats/activity', { params: { query: { limit } } })),
    placeholderData: keepPreviousData,
    refetchInterval: 30_000,
  });
  return (
    <QueryView query={feed} label="Loading the activity feed">
      {({ activities }) =>
        activities.length === 0 ? (
          <Empty title="No activity yet.">Imports, syncs, extractions and wiki generations show up here.</Empty>
        ) : (
          <Flex direction="column" gap="3">
            <ol aria-label="Activity feed" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
              {activities.map((a, i) => {
                const kind = ACTIVITY[a.type] ?? { label: a.type, icon: null, color: 'gray' as const };
                return (
                  <li
                    // biome-ignore lint/suspicious/noArrayIndexKey: entries have no id; the list is replaced whole
                    key={`${a.type}-${a.timestamp}-${i}`}
                    style={{ borderBottom: '1px solid var(--gray-a4)', padding: '8px 0' }}
                  >
                    <Flex gap="2" align="start" wrap="wrap" justify="between">
                      <Flex gap="2" align="center" wrap="wrap" style={{ minWidth: 0 }}>
                        <Badge highContrast color={kind.color} variant="soft">
                          {kind.icon}
                          {kind.label}
                        </Badge>
                        {'channel_id' in a ? <ChannelLink id={a.channel_id} names={names} /> : null}
                        <Text size="2">{activityText(a)}</Text>
                      </Flex>
                      <Text size="1" color="gray" as="div">
                        <time dateTime={a.timestamp}>{formatTime(a.timestamp)}</time>
                      </Text>
                    </Flex>
                  </li>
                );
              })}
            </ol>
            {activities.length >= limit && limit < 100 ? (
              <Box>
                <Button variant="soft" size="1" onClick={() => setLimit(100)} loading={feed.isFetching}>
                  Show more
                </Button>
              </Box>
            ) : null}
          </Flex>
        )
      }
    </QueryView>
  );
};

/**
 * The overview tab: the totals (GET /api/stats, spec "Statistics and health objects": system stats), quality and
 * performance with the spec's band words (GET /api/stats/metrics, spec "Metric quality bands"), storage and LLM
 * usage, and the activity feed.
 */
export const Overview = () => {
  const stats = useQuery({ queryKey: ['stats'], queryFn: () => unwrap(api.GET('/api/stats')) });
  const metrics = useQuery({
    queryKey: ['stats', 'metrics'],
    queryFn: () => unwrap(api.GET('/api/stats/metrics')),
    refetchInterval: 15_000,
  });
  return (
    <Flex direction="column" gap="5">
      <section aria-labelledby="totals-h">
        <Heading as="h2" size="4" mb="2" id="totals-h">
          Totals
        </Heading>
        <QueryView query={stats} label="Loading totals">
          {(s) => (
            <Grid columns={{ initial: '2', sm: '4', md: '7' }} gap="3">
              <Figure label="Channels" value={formatCount(s.total_channels)} />
              <Figure label="Messages" value={formatCount(s.total_messages)} />
              <Figure label="Authors" value={formatCount(s.total_authors)} />
              <Figure label="Facts" value={formatCount(s.total_facts)} />
              <Figure label="Decisions" value={formatCount(s.total_decisions)} />
              <Figure label="Entities" value={formatCount(s.total_entities)} />
              <Figure label="Wiki pages" value={formatCount(s.wiki_pages)} />
            </Grid>
          )}
        </QueryView>
      </section>

      <section aria-labelledby="quality-h">
        <Heading as="h2" size="4" mb="2" id="quality-h">
          Quality and performance
        </Heading>
        <QueryView query={metrics} label="Loading metrics">
          {(m) => (
            <Flex direction="column" gap="3">
              <Grid columns={{ initial: '1', sm: '3' }} gap="3">
                <Figure
                  label="Query latency"
                  value={`${m.performance.avg_query_latency_ms.toLocaleString()} ms`}
                  hint={<BandBadge band={m.bands.query_latency} />}
                />
                <Figure
                  label="Fact quality"
                  value={m.quality.avg_fact_quality_score.toLocaleString()}
                  hint={<BandBadge band={m.bands.fact_quality} />}
                />
                <Figure
                  label="Sync duration"
                  value={
                    m.bands.sync_duration
                      ? `${m.performance.avg_sync_duration_seconds.toLocaleString()} s`
                      : 'no sync yet'
                  }
                  hint={<BandBadge band={m.bands.sync_duration} />}
                />
              </Grid>
              <Text size="1" color="gray">
                Bands: query latency below 50 ms excellent, to 100 good, to 200 fair, above poor; fact quality above 0.8
                excellent, from 0.6 good, from 0.4 fair, below poor; sync below 60 s excellent, to 120 good, to 300
                fair, above poor.
              </Text>
              <Grid columns={{ initial: '2', sm: '4' }} gap="3">
                <Figure label="High-importance facts" value={formatCount(m.quality.high_importance_facts)} />
                <Figure label="Wiki generation" value={`${m.performance.avg_wiki_generation_seconds} s`} />
                <Figure label="Vector store objects" value={formatCount(m.storage.vector_store_objects)} />
                <Figure label="Documents" value={formatCount(m.storage.document_store_documents)} />
                <Figure label="Graph nodes" value={formatCount(m.storage.graph_store_nodes)} />
                <Figure label="Graph relationships" value={formatCount(m.storage.graph_store_relationships)} />
                <Figure
                  label="LLM calls"
                  value={formatCount(m.usage.total_llm_calls)}
                  hint={`${formatCount(m.usage.total_llm_tokens)} tokens`}
                />
                <Figure
                  label="Estimated LLM cost"
                  value={m.usage.estimated_cost_usd.toLocaleString(undefined, { style: 'currency', currency: 'USD' })}
                />
              </Grid>
              {m.event_log.total_lag > 0 ? (
                <Text size="2" color="amber">
                  The projectors are {formatCount(m.event_log.total_lag)} events behind; figures are catching up.
                </Text>
              ) : (
                <Text size="2" color="gray">
                  <CheckCircledIcon style={{ verticalAlign: 'middle' }} /> Every projector is caught up.
                </Text>
              )}
            </Flex>
          )}
        </QueryView>
      </section>

      <section aria-labelledby="feed-h">
        <Heading as="h2" size="4" mb="2" id="feed-h">
          Activity feed
        </Heading>
        <ActivityFeed />
      </section>
    </Flex>
  );
};
