import { ReloadIcon } from '@radix-ui/react-icons';
import { Badge, Button, Flex, Heading, Table, Text } from '@radix-ui/themes';
import { useQuery } from '@tanstack/react-query';
import { api, errorOf, unwrap } from '../../api/client';
import { formatCount, formatTime, useIsAdmin } from '../../api/hooks';
import { readKey } from '../../api/key';
import { Empty, QueryView } from '../../components/states';
import { ScrollTable, TableCaption } from './bar-chart';

/** Dependency names as people read them (GET /api/health and GET /api/stats/health keys). */
const DEPENDENCY: Record<string, string> = {
  document_store: 'Document store',
  vector_store: 'Vector store',
  graph_store: 'Graph store',
  llm_provider: 'LLM provider',
  embedding_provider: 'Embedding provider',
  web_search_provider: 'Web search provider',
  event_log: 'Event log',
  keyword_index: 'Keyword index',
};

type Tone = 'green' | 'amber' | 'red' | 'gray';
/** The colour of a status word of either health route (healthy/up, degraded, failing/down/unhealthy). */
const tone = (s: string): Tone =>
  s === 'healthy' || s === 'up' || s === 'closed'
    ? 'green'
    : s === 'degraded' || s === 'half-open'
      ? 'amber'
      : s === 'failing' || s === 'down' || s === 'unhealthy' || s === 'open'
        ? 'red'
        : 'gray';

/** A status word as a coloured badge (the word itself is the information; colour only repeats it). */
export const StatusBadge = ({ status }: { status: string }) => (
  <Badge highContrast color={tone(status)} variant="soft">
    {status}
  </Badge>
);

const formatUptime = (s: number) => {
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return d ? `${d} d ${h} h` : h ? `${h} h ${m} min` : m ? `${m} min` : `${Math.round(s)} s`;
};

/** A circuit breaker from the Prometheus gauge `atlas_circuit_breaker_state{breaker, dependency}` (0, 1, 2). */
interface Breaker {
  breaker: string;
  dependency: string;
  state: 'closed' | 'half-open' | 'open';
}

/** The breakers of GET /metrics (admins: the text exposition format, parsed for one gauge). */
const fetchBreakers = async (): Promise<Breaker[]> => {
  const key = readKey();
  const res = await fetch('/metrics', key ? { headers: { authorization: `Bearer ${key}` } } : {});
  if (!res.ok) throw await errorOf(res);
  const out: Breaker[] = [];
  for (const line of (await res.text()).split('\n')) {
    const m = /^atlas_circuit_breaker_state\{(.*)\}\s+(\d+)/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    out.push({
      breaker: labels.breaker ?? '',
      dependency: labels.dependency ?? '',
      state: (['closed', 'half-open', 'open'] as const)[Number(m[2])] ?? 'open',
    });
  }
  return out;
};

/**
 * Consumer lag per projector (GET /api/stats/metrics `event_log.consumer_groups`: the same figures as `atlas lag`
 * and Prometheus `atlas_consumer_lag`): one row per consumer group (a projector's group is
 * `atlas.projector.<name>`), its topics, committed and end offsets summed over partitions, and the lag.
 */
const LagTable = () => {
  const metrics = useQuery({
    queryKey: ['stats', 'metrics'],
    queryFn: () => unwrap(api.GET('/api/stats/metrics')),
    refetchInterval: 5_000,
  });
  return (
    <QueryView query={metrics} label="Loading consumer lag">
      {(m) => {
        const groups = new Map<string, { topics: Set<string>; committed: number; end: number; lag: number }>();
        for (const r of m.event_log.consumer_groups) {
          const g = groups.get(r.group) ?? { topics: new Set(), committed: 0, end: 0, lag: 0 };
          g.topics.add(r.topic);
          g.committed += r.committed_offset;
          g.end += r.end_offset;
          g.lag += r.lag;
          groups.set(r.group, g);
        }
        if (groups.size === 0) return <Empty title="No consumer group reports lag." />;
        return (
          <Flex direction="column" gap="2">
            <Text size="2">
              Event log: {m.event_log.kind}; total lag <Text weight="bold">{formatCount(m.event_log.total_lag)}</Text>{' '}
              {m.event_log.total_lag === 0 ? '(every projector is caught up)' : 'events'}.
            </Text>
            <ScrollTable label="Consumer lag per projector">
              <Table.Root size="1" variant="surface">
                <TableCaption>Consumer lag per projector</TableCaption>
                <Table.Header>
                  <Table.Row>
                    <Table.ColumnHeaderCell>Projector</Table.ColumnHeaderCell>
                    <Table.ColumnHeaderCell className="wide-only">Topics</Table.ColumnHeaderCell>
                    <Table.ColumnHeaderCell justify="end" className="wide-only">
                      Committed
                    </Table.ColumnHeaderCell>
                    <Table.ColumnHeaderCell justify="end" className="wide-only">
                      End
                    </Table.ColumnHeaderCell>
                    <Table.ColumnHeaderCell justify="end">Lag</Table.ColumnHeaderCell>
                  </Table.Row>
                </Table.Header>
                <Table.Body>
                  {[...groups].map(([group, g]) => (
                    <Table.Row key={group}>
                      <Table.RowHeaderCell>
                        <Text as="div" weight="medium">
                          {group.replace(/^atlas\.projector\./, '')}
                        </Text>
                        <Text as="div" size="1" color="gray" style={{ overflowWrap: 'anywhere' }}>
                          <code>{group}</code>
                        </Text>
                      </Table.RowHeaderCell>
                      <Table.Cell className="wide-only">{[...g.topics].join(', ')}</Table.Cell>
                      <Table.Cell justify="end" className="wide-only">
                        {formatCount(g.committed)}
                      </Table.Cell>
                      <Table.Cell justify="end" className="wide-only">
                        {formatCount(g.end)}
                      </Table.Cell>
                      <Table.Cell justify="end">
                        <Badge highContrast color={g.lag === 0 ? 'green' : 'amber'} variant="soft">
                          {formatCount(g.lag)}
                        </Badge>
                      </Table.Cell>
                    </Table.Row>
                  ))}
                </Table.Body>
              </Table.Root>
            </ScrollTable>
          </Flex>
        );
      }}
    </QueryView>
  );
};

/** The circuit breakers (admins only: GET /metrics needs an admin key unless METRICS_PUBLIC). */
const Breakers = () => {
  const breakers = useQuery({ queryKey: ['metrics', 'breakers'], queryFn: fetchBreakers, refetchInterval: 15_000 });
  return (
    <QueryView query={breakers} label="Loading circuit breakers">
      {(list) =>
        list.length === 0 ? (
          <Empty title="No circuit breaker.">
            Breakers guard remote models and web search; none is configured in this process.
          </Empty>
        ) : (
          <ScrollTable label="Circuit breakers">
            <Table.Root size="1" variant="surface">
              <TableCaption>Circuit breakers</TableCaption>
              <Table.Header>
                <Table.Row>
                  <Table.ColumnHeaderCell>Breaker</Table.ColumnHeaderCell>
                  <Table.ColumnHeaderCell className="wide-only">Dependency</Table.ColumnHeaderCell>
                  <Table.ColumnHeaderCell>State</Table.ColumnHeaderCell>
                </Table.Row>
              </Table.Header>
              <Table.Body>
                {list.map((b) => (
                  <Table.Row key={b.breaker}>
                    <Table.RowHeaderCell style={{ overflowWrap: 'anywhere' }}>
                      <code>{b.breaker}</code>
                    </Table.RowHeaderCell>
                    <Table.Cell className="wide-only">{DEPENDENCY[b.dependency] ?? b.dependency}</Table.Cell>
                    <Table.Cell>
                      <StatusBadge status={b.state} />
                    </Table.Cell>
                  </Table.Row>
                ))}
              </Table.Body>
            </Table.Root>
          </ScrollTable>
        )
      }
    </QueryView>
  );
};

/**
 * The health tab: every dependency's status (GET /api/health: healthy, degraded or failing, overall status, uptime,
 * degraded_since) beside the stats probe's status and latency where it has one (GET /api/stats/health: up, degraded
 * or down with latency_ms; spec "Stats and health", "Health (stats)"), the circuit breakers (admins, GET /metrics),
 * and the consumer lag per projector. Polled every 10 s (lag every 5 s); "Check now" probes again.
 */
export const HealthPanel = () => {
  const isAdmin = useIsAdmin();
  const health = useQuery({
    queryKey: ['health'],
    queryFn: () => unwrap(api.GET('/api/health')),
    refetchInterval: 10_000,
  });
  const probes = useQuery({
    queryKey: ['stats', 'health'],
    queryFn: () => unwrap(api.GET('/api/stats/health')),
    refetchInterval: 10_000,
  });
  const checkNow = () => {
    void health.refetch();
    void probes.refetch();
  };
  return (
    <Flex direction="column" gap="5">
      <section aria-labelledby="deps-h">
        <Flex justify="between" align="center" gap="2" wrap="wrap" mb="2">
          <Heading as="h2" size="4" id="deps-h">
            Dependencies
          </Heading>
          <Button size="1" variant="soft" onClick={checkNow} loading={health.isFetching || probes.isFetching}>
            <ReloadIcon /> Check now
          </Button>
        </Flex>
        <QueryView query={health} label="Checking dependencies">
          {(h) => {
            const components = (probes.data?.components ?? {}) as Record<
              string,
              { status: string; latency_ms: number }
            >;
            return (
              <Flex direction="column" gap="3">
                <Flex gap="3" align="center" wrap="wrap">
                  <Text size="2">
                    Overall: <StatusBadge status={h.status} />
                  </Text>
                  <Text size="2" color="gray">
                    up {formatUptime(h.uptime)}
                  </Text>
                  {h.degraded_since ? (
                    <Text size="2" color="gray">
                      not fully healthy since {formatTime(h.degraded_since)}
                    </Text>
                  ) : null}
                  {probes.data ? (
                    <Text size="2" color="gray">
                      probed {formatTime(probes.data.checked_at)}
                    </Text>
                  ) : null}
                </Flex>
                <ScrollTable label="Dependency health">
                  <Table.Root size="1" variant="surface">
                    <TableCaption>Dependency health</TableCaption>
                    <Table.Header>
                      <Table.Row>
                        <Table.ColumnHeaderCell>Dependency</Table.ColumnHeaderCell>
                        <Table.ColumnHeaderCell>Status</Table.ColumnHeaderCell>
                        <Table.ColumnHeaderCell className="wide-only">Stats probe</Table.ColumnHeaderCell>
                        <Table.ColumnHeaderCell justify="end">Latency</Table.ColumnHeaderCell>
                      </Table.Row>
                    </Table.Header>
                    <Table.Body>
                      {Object.entries(h.dependencies).map(([name, status]) => {
                        const probe = components[name];
                        return (
                          <Table.Row key={name} data-dependency={name}>
                            <Table.RowHeaderCell>
                              <Text as="div" weight="medium">
                                {DEPENDENCY[name] ?? name}
                              </Text>
                              <Text as="div" size="1" color="gray" style={{ overflowWrap: 'anywhere' }}>
                                <code>{name}</code>
                              </Text>
                            </Table.RowHeaderCell>
                            <Table.Cell>
                              <StatusBadge status={String(status)} />
                            </Table.Cell>
                            <Table.Cell className="wide-only">
                              {probe ? <StatusBadge status={probe.status} /> : '—'}
                            </Table.Cell>
                            <Table.Cell justify="end">{probe ? `${probe.latency_ms} ms` : '—'}</Table.Cell>
                          </Table.Row>
                        );
                      })}
                    </Table.Body>
                  </Table.Root>
                </ScrollTable>
                {h.dependencies.llm_provider === 'degraded' ? (
                  <Text size="1" color="gray">
                    LLM provider degraded: no remote model answers, the offline fallbacks extract facts and answer.
                  </Text>
                ) : null}
              </Flex>
            );
          }}
        </QueryView>
      </section>

      <section aria-labelledby="lag-h">
        <Heading as="h2" size="4" mb="2" id="lag-h">
          Consumer lag per projector
        </Heading>
        <LagTable />
      </section>

      {isAdmin ? (
        <section aria-labelledby="breakers-h">
          <Heading as="h2" size="4" mb="2" id="breakers-h">
            Circuit breakers
          </Heading>
          <Breakers />
        </section>
      ) : null}
    </Flex>
  );
};
