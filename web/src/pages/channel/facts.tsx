import { Cross2Icon, ExternalLinkIcon } from '@radix-ui/react-icons';
import { Badge, Button, Card, Flex, Link as RLink, Select, Text } from '@radix-ui/themes';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import { Link, useSearchParams } from 'react-router';
import { ApiError, api, unwrap } from '../../api/client';
import { formatCount, formatTime } from '../../api/hooks';
import type { paths } from '../../api/schema';
import { type AsOf, AsOfControl, AsOfNotice, describeAsOf, parseAsOf } from '../../components/as-of';
import { safeHref } from '../../components/citation';
import { Empty, ErrorState, Loading } from '../../components/states';
import { channelKeys } from './keys';

/** Facts per page (spec "Memories": limit default 20, max 100). */
export const FACT_PAGE = 20;
/** Spec "Memory (atomic fact)": fact_type values. */
export const FACT_TYPES = ['decision', 'opinion', 'observation', 'action_item', 'question'] as const;
/** Spec "Memory (atomic fact)": importance values. */
export const IMPORTANCES = ['high', 'medium', 'low'] as const;

type MemoryList = paths['/api/memories']['get']['responses'][200]['content']['application/json']['memories'][number];
type MemoryDetail = paths['/api/memories/{memory_id}']['get']['responses'][200]['content']['application/json'];

const TYPE_LABEL: Record<string, string> = {
  decision: 'Decision',
  opinion: 'Opinion',
  observation: 'Observation',
  action_item: 'Action item',
  question: 'Question',
};
const TYPE_COLOR = {
  decision: 'green',
  opinion: 'purple',
  observation: 'gray',
  action_item: 'orange',
  question: 'cyan',
} as const;
const IMPORTANCE_COLOR = { high: 'red', medium: 'amber', low: 'gray' } as const;

/** Spec "Memory" quality bands: 0.8–1.0 high, 0.5–0.8 medium, below 0.5 low. */
export const qualityBand = (q: number): string => (q >= 0.8 ? 'high' : q >= 0.5 ? 'medium' : 'low');

/** A filter of the list as a labelled select whose value lives in the URL (`all` removes it). */
const FilterSelect = ({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: string | null;
  options: readonly { value: string; label: string }[];
  onChange: (v: string | null) => void;
}) => {
  const id = useId();
  return (
    <Flex direction="column" gap="1">
      <Text as="label" size="1" weight="medium" id={id}>
        {label}
      </Text>
      <Select.Root value={value ?? 'all'} onValueChange={(v) => onChange(v === 'all' ? null : v)}>
        <Select.Trigger aria-labelledby={id} style={{ minWidth: 150 }} />
        <Select.Content>
          <Select.Item value="all">All</Select.Item>
          {options.map((o) => (
            <Select.Item key={o.value} value={o.value}>
              {o.label}
            </Select.Item>
          ))}
        </Select.Content>
      </Select.Root>
    </Flex>
  );
};

/** One fact: its text, type, importance, quality, author, time, tags (each filters the list), source and permalink. */
const FactCard = ({
  m,
  base,
  highlighted,
  tagHref,
}: {
  m: MemoryList | MemoryDetail;
  base: string;
  highlighted: boolean;
  tagHref: (kind: 'topic' | 'entity', tag: string) => string;
}) => {
  const permalink = 'permalink' in m ? safeHref(m.permalink) : undefined;
  return (
    <Card
      asChild
      style={highlighted ? { outline: '2px solid var(--amber-9)', background: 'var(--amber-a3)' } : undefined}
    >
      <article
        aria-label={`${TYPE_LABEL[m.fact_type] ?? m.fact_type} by ${m.author_name}`}
        aria-current={highlighted ? 'true' : undefined}
        data-memory-id={m.id}
      >
        <Flex direction="column" gap="2">
          <Flex gap="2" wrap="wrap" align="center">
            <Badge color={TYPE_COLOR[m.fact_type]} highContrast>
              {TYPE_LABEL[m.fact_type] ?? m.fact_type}
            </Badge>
            <Badge color={IMPORTANCE_COLOR[m.importance]} variant="soft" highContrast>
              {m.importance} importance
            </Badge>
            <Badge color="gray" variant="soft" highContrast title="Quality score (0 to 1)">
              quality {m.quality_score.toFixed(2)} ({qualityBand(m.quality_score)})
            </Badge>
            {highlighted ? (
              <Badge color="amber" highContrast>
                linked fact
              </Badge>
            ) : null}
          </Flex>
          <Text as="p" size="3" style={{ margin: 0, whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
            {m.memory_text}
          </Text>
          <Text size="2" color="gray">
            {m.author_name} · <time dateTime={m.message_ts}>{formatTime(m.message_ts)}</time>
          </Text>
          {m.topic_tags.length || m.entity_tags.length ? (
            <Flex gap="1" wrap="wrap" align="center">
              {m.topic_tags.map((t) => (
                <Badge key={`t-${t}`} asChild color="blue" variant="soft" highContrast>
                  <Link to={tagHref('topic', t)} aria-label={`Topic ${t}: show its facts`}>
                    #{t}
                  </Link>
                </Badge>
              ))}
              {m.entity_tags.map((t) => (
                <Badge key={`e-${t}`} asChild color="gray" variant="outline" highContrast>
                  <Link to={tagHref('entity', t)} aria-label={`Entity ${t}: show its facts`}>
                    {t}
                  </Link>
                </Badge>
              ))}
            </Flex>
          ) : null}
          <Flex gap="4" wrap="wrap">
            <RLink asChild size="2">
              <Link to={`${base}/messages?message=${encodeURIComponent(m.source_message_id)}`}>
                Source message in context
              </Link>
            </RLink>
            {permalink ? (
              <RLink href={permalink} target="_blank" rel="noreferrer noopener" size="2">
                Permalink <ExternalLinkIcon aria-hidden="true" />
              </RLink>
            ) : null}
          </Flex>
        </Flex>
      </article>
    </Card>
  );
};

/**
 * `?memory=<id>`: the linked fact on top, in its detail form (GET /api/memories/{memory_id}); with `asOf`, its
 * validity as it stood then (the detail's `as_of`).
 */
const LinkedFact = ({
  memoryId,
  channelId,
  base,
  tagHref,
  asOf,
}: {
  memoryId: string;
  channelId: string;
  base: string;
  tagHref: (kind: 'topic' | 'entity', tag: string) => string;
  asOf: AsOf | null;
}) => {
  const memory = useQuery({
    queryKey: [...channelKeys.memory(memoryId), asOf?.instant ?? 'now'],
    queryFn: () =>
      unwrap(
        api.GET('/api/memories/{memory_id}', {
          params: { path: { memory_id: memoryId }, query: asOf ? { as_of: asOf.instant } : {} },
        }),
      ),
    retry: (n, e) => !(e instanceof ApiError && e.status === 404) && n < 2,
  });
  if (memory.isPending) return <Loading label="Loading the linked fact" lines={2} />;
  if (memory.error) return <ErrorState error={memory.error} retry={() => void memory.refetch()} />;
  const m = memory.data;
  if (m.channel_id !== channelId)
    return (
      <Empty title="The linked fact belongs to another channel.">
        <Link to={`/channels/${encodeURIComponent(m.channel_id)}/facts?memory=${encodeURIComponent(m.id)}`}>
          Open it there
        </Link>
        .
      </Empty>
    );
  return (
    <Flex direction="column" gap="2">
      <FactCard m={m} base={base} highlighted tagHref={tagHref} />
      <Text size="1" color="gray">
        Valid from {formatTime(m.valid_at)}
        {m.invalid_at ? ` until ${formatTime(m.invalid_at)}` : ''}
        {m.superseded_by ? ' · superseded by a later fact' : ''}
        {m.potential_contradiction ? ' · may contradict another fact' : ''}
        {m.thread_context_summary ? ` · thread: ${m.thread_context_summary}` : ''}
      </Text>
    </Flex>
  );
};

/**
 * The channel's facts (spec "Memories": GET /api/memories with channel_id, page, limit 20 and the filters fact_type,
 * importance, topic and entity, all in the URL as `type`, `importance`, `topic`, `entity`, `page`). Each fact shows
 * its type, importance, quality score and band (spec "Memory" quality bands), author, time, topic and entity tags
 * (each a link that filters by it), its source message in context (the messages tab's `?message=`) and its
 * permalink. `?memory=<id>` shows that fact on top (GET /api/memories/{memory_id}) and highlights it in the list.
 * `?as_of=` (a day, read as its end in UTC, or an instant; AsOf, issue 27 point 2) lists the facts as they stood then
 * (the list's and the detail's `as_of`: the facts stated by then, with their validity then), under an amber notice
 * with the way back to now.
 */
export const FactsTab = ({ channelId }: { channelId: string }) => {
  const [params, setParams] = useSearchParams();
  const base = `/channels/${encodeURIComponent(channelId)}`;
  const type = FACT_TYPES.find((t) => t === params.get('type')) ?? null;
  const importance = IMPORTANCES.find((t) => t === params.get('importance')) ?? null;
  const topic = params.get('topic') || null;
  const entity = params.get('entity') || null;
  const page = Math.max(1, Number.parseInt(params.get('page') ?? '1', 10) || 1);
  const memoryId = params.get('memory');
  const asOf = parseAsOf(params.get('as_of'));
  const query = {
    channel_id: channelId,
    page,
    limit: FACT_PAGE,
    ...(type ? { fact_type: type } : {}),
    ...(importance ? { importance } : {}),
    ...(topic ? { topic } : {}),
    ...(entity ? { entity } : {}),
    ...(asOf ? { as_of: asOf.instant } : {}),
  };
  const facts = useQuery({
    queryKey: channelKeys.facts(channelId, query),
    queryFn: () => unwrap(api.GET('/api/memories', { params: { query } })),
    placeholderData: keepPreviousData,
  });

  /** The URL with these parameters changed (null removes one); a filter change goes back to page 1. */
  const withParams = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) v === null ? next.delete(k) : next.set(k, v);
    if (!('page' in changes)) next.delete('page');
    if (next.get('page') === '1') next.delete('page');
    const s = next.toString();
    return s ? `?${s}` : '?';
  };
  const set = (changes: Record<string, string | null>) => setParams(new URLSearchParams(withParams(changes)));
  const tagHref = (kind: 'topic' | 'entity', tag: string) =>
    `${base}/facts${withParams({ [kind]: tag, memory: null })}`;
  const filtered = Boolean(type || importance || topic || entity);

  return (
    <Flex direction="column" gap="4">
      {asOf ? (
        <AsOfNotice
          asOf={asOf}
          what="facts"
          detail="those stated by then, with their validity then."
          testId="facts-as-of"
          onBack={() => set({ as_of: null })}
        />
      ) : null}
      {memoryId ? (
        <LinkedFact memoryId={memoryId} channelId={channelId} base={base} tagHref={tagHref} asOf={asOf} />
      ) : null}
      <Flex gap="3" wrap="wrap" align="end">
        <FilterSelect
          label="Fact type"
          value={type}
          options={FACT_TYPES.map((t) => ({ value: t, label: TYPE_LABEL[t]! }))}
          onChange={(v) => set({ type: v })}
        />
        <FilterSelect
          label="Importance"
          value={importance}
          options={IMPORTANCES.map((t) => ({ value: t, label: t }))}
          onChange={(v) => set({ importance: v })}
        />
        <AsOfControl value={asOf} onChange={(day) => set({ as_of: day })} clearable={false} />
        {topic ? (
          <Button
            variant="soft"
            color="blue"
            onClick={() => set({ topic: null })}
            aria-label={`Remove topic filter ${topic}`}
          >
            topic #{topic} <Cross2Icon aria-hidden="true" />
          </Button>
        ) : null}
        {entity ? (
          <Button
            variant="soft"
            color="gray"
            onClick={() => set({ entity: null })}
            aria-label={`Remove entity filter ${entity}`}
          >
            entity {entity} <Cross2Icon aria-hidden="true" />
          </Button>
        ) : null}
        {filtered ? (
          <Button variant="ghost" onClick={() => set({ type: null, importance: null, topic: null, entity: null })}>
            Clear filters
          </Button>
        ) : null}
      </Flex>
      {facts.isPending ? (
        <Loading label="Loading facts" />
      ) : facts.error ? (
        <ErrorState error={facts.error} retry={() => void facts.refetch()} />
      ) : facts.data.memories.length === 0 ? (
        <Empty
          title={
            filtered
              ? `No facts match these filters${asOf ? ` as of ${describeAsOf(asOf)}` : ''}.`
              : asOf
                ? `No facts yet as of ${describeAsOf(asOf)}.`
                : 'No facts yet.'
          }
        >
          {filtered
            ? 'Try another fact type or importance, or clear the filters.'
            : 'Facts are extracted from the messages after each sync or import.'}
        </Empty>
      ) : (
        <Flex direction="column" gap="3" aria-busy={facts.isFetching}>
          <Text size="2" color="gray" role="status">
            {formatCount(facts.data.total)} facts{filtered ? ' match' : ''} · page {formatCount(facts.data.page)} of{' '}
            {formatCount(facts.data.pages)}
          </Text>
          <Flex asChild direction="column" gap="3">
            <ol aria-label="Facts" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
              {facts.data.memories.map((m) => (
                <li key={m.id}>
                  <FactCard m={m} base={base} highlighted={m.id === memoryId} tagHref={tagHref} />
                </li>
              ))}
            </ol>
          </Flex>
          {facts.data.pages > 1 ? (
            <Flex gap="3" align="center" wrap="wrap" asChild>
              <nav aria-label="Fact pages">
                <Button variant="soft" disabled={page <= 1} onClick={() => set({ page: String(page - 1) })}>
                  Previous page
                </Button>
                <Button
                  variant="soft"
                  disabled={page >= facts.data.pages}
                  onClick={() => set({ page: String(page + 1) })}
                >
                  Next page
                </Button>
              </nav>
            </Flex>
          ) : null}
        </Flex>
      )}
    </Flex>
  );
};
