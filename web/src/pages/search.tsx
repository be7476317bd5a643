import { Cross2Icon, MagnifyingGlassIcon } from '@radix-ui/react-icons';
import {
  Badge,
  Box,
  Button,
  Card,
  Checkbox,
  Flex,
  Heading,
  Link as RLink,
  Select,
  Text,
  TextField,
} from '@radix-ui/themes';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type FormEvent, Fragment, type ReactNode, useEffect, useState } from 'react';
import { Link, Navigate, useParams, useSearchParams } from 'react-router';
import { api, unwrap } from '../api/client';
import { formatTime, useChannels, useWide } from '../api/hooks';
import { AsOfControl, describeAsOf, parseAsOf } from '../components/as-of';
import { safeHref } from '../components/citation';
import { FreshnessMark, freshnessIn } from '../components/freshness';
import { Empty, ErrorState, Loading } from '../components/states';

const FACT_TYPES = ['decision', 'action_item', 'question', 'observation', 'opinion'] as const;
const IMPORTANCE = ['high', 'medium', 'low'] as const;
const PAGE = 20;

/**
 * A highlight (spec "Search result": matches wrapped in `<mark>` and `</mark>`) as React elements: only those two
 * tags become marks; every other character, `<` and `>` of chat text included, stays text. No HTML is ever injected.
 */
export const highlighted = (fragment: string): ReactNode[] =>
  fragment.split(/(<mark>[\s\S]*?<\/mark>)/g).map((part, i) =>
    part.startsWith('<mark>') && part.endsWith('</mark>') ? (
      // biome-ignore lint/suspicious/noArrayIndexKey: fragments of one string, in order
      <mark key={i}>{part.slice(6, -7)}</mark>
    ) : (
      // biome-ignore lint/suspicious/noArrayIndexKey: fragments of one string, in order
      <Fragment key={i}>{part}</Fragment>
    ),
  );

/**
 * The search state kept in the URL: `q`, `channel`, repeated `type`, `importance`, `topic`, `entity`, `author`, `from`,
 * `to`, `as_of` (a day, read as its end in UTC, or an instant: AsOf), `limit`.
 */
const stateOf = (p: URLSearchParams) => ({
  q: p.get('q') ?? '',
  channel: p.get('channel'),
  types: p.getAll('type'),
  importance: p.getAll('importance'),
  topics: p.getAll('topic'),
  entities: p.getAll('entity'),
  authors: p.getAll('author'),
  from: p.get('from') ?? '',
  to: p.get('to') ?? '',
  asOf: parseAsOf(p.get('as_of')),
  limit: Math.min(50, Math.max(PAGE, Number(p.get('limit')) || PAGE)),
});

/**
 * POST /api/search's body for a URL state (spec "Search"; filters only when set; facet counts always asked). `as_of`
 * (issue 27 point 2) is the end of the chosen day in UTC: only what Atlas knew then, facts valid as they were then.
 */
const bodyOf = (s: ReturnType<typeof stateOf>) => {
  const filters = {
    ...(s.types.length ? { fact_types: s.types as (typeof FACT_TYPES)[number][] } : {}),
    ...(s.importance.length ? { importance: s.importance as (typeof IMPORTANCE)[number][] } : {}),
    ...(s.topics.length ? { topics: s.topics } : {}),
    ...(s.entities.length ? { entities: s.entities } : {}),
    ...(s.authors.length ? { authors: s.authors } : {}),
    ...(s.from || s.to
      ? {
          date_range: {
            ...(s.from ? { start: new Date(`${s.from}T00:00:00Z`).toISOString() } : {}),
            ...(s.to ? { end: new Date(`${s.to}T23:59:59.999Z`).toISOString() } : {}),
          },
        }
      : {}),
  };
  return {
    query: s.q,
    channel_id: s.channel,
    limit: s.limit,
    include_citations: true,
    facets: ['fact_type', 'importance', 'topics'] as ('fact_type' | 'importance' | 'topics')[],
    ...(Object.keys(filters).length ? { filters } : {}),
    ...(s.asOf ? { as_of: s.asOf.instant } : {}),
  };
};

/**
 * Search (spec "Search", POST /api/search): one box; facets for fact type, importance and topic with the counts the
 * API gives, entity and author filters, a date range, a channel and an "As of" day (the search as Atlas knew it at the
 * end of that day, UTC: POST /api/search's `as_of`); highlights rendered as text with marks; the whole
 * state in the URL (a search can be linked and reloaded); each result opens its fact, its message in context, and its
 * channel.
 */
export const SearchPage = () => {
  const [params, setParams] = useSearchParams();
  const s = stateOf(params);
  const [text, setText] = useState(s.q);
  useEffect(() => setText(s.q), [s.q]);
  const channels = useChannels();
  const wide = useWide();
  const search = useQuery({
    queryKey: ['search', params.toString()],
    enabled: s.q.trim().length > 0,
    placeholderData: keepPreviousData,
    queryFn: () => unwrap(api.POST('/api/search', { body: bodyOf(s) })),
  });

  const set = (mutate: (p: URLSearchParams) => void) => {
    const next = new URLSearchParams(params);
    mutate(next);
    next.delete('limit');
    setParams(next);
  };
  const toggle = (key: string, value: string) =>
    set((p) => {
      const all = p.getAll(key);
      p.delete(key);
      for (const v of all.includes(value) ? all.filter((x) => x !== value) : [...all, value]) p.append(key, v);
    });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    set((p) => p.set('q', text.trim()));
  };
  const facets = search.data?.facets;
  const active = [
    ...s.types.map((v) => ['type', v] as const),
    ...s.importance.map((v) => ['importance', v] as const),
    ...s.topics.map((v) => ['topic', v] as const),
    ...s.entities.map((v) => ['entity', v] as const),
    ...s.authors.map((v) => ['author', v] as const),
  ];

  const filters = (
    <>
      <Box>
        <Text as="label" htmlFor="channel-filter" size="2" weight="bold">
          Channel
        </Text>
        <Select.Root
          value={s.channel ?? 'all'}
          onValueChange={(v) => set((p) => (v === 'all' ? p.delete('channel') : p.set('channel', v)))}
        >
          <Select.Trigger id="channel-filter" style={{ width: '100%' }} />
          <Select.Content position="popper">
            <Select.Item value="all">Every channel</Select.Item>
            {channels.data?.map((c) => (
              <Select.Item key={c.id} value={c.id}>
                #{c.name}
              </Select.Item>
            ))}
          </Select.Content>
        </Select.Root>
      </Box>
      <FacetGroup
        title="Fact type"
        values={FACT_TYPES}
        counts={facets?.fact_type}
        selected={s.types}
        onToggle={(v) => toggle('type', v)}
      />
      <FacetGroup
        title="Importance"
        values={IMPORTANCE}
        counts={facets?.importance}
        selected={s.importance}
        onToggle={(v) => toggle('importance', v)}
      />
      <FacetGroup
        title="Topic"
        values={[
          ...new Set([
            ...s.topics,
            ...Object.entries(facets?.topics ?? {})
              .sort((a, b) => b[1] - a[1])
              .slice(0, 12)
              .map(([t]) => t),
          ]),
        ]}
        counts={facets?.topics}
        selected={s.topics}
        onToggle={(v) => toggle('topic', v)}
      />
      <TagInput label="Entity" onAdd={(v) => toggle('entity', v)} />
      <TagInput label="Author" onAdd={(v) => toggle('author', v)} />
      <Flex gap="2" wrap="wrap">
        <label>
          <Text as="div" size="2" weight="bold">
            From
          </Text>
          <input
            type="date"
            value={s.from}
            onChange={(e) => set((p) => (e.target.value ? p.set('from', e.target.value) : p.delete('from')))}
          />
        </label>
        <label>
          <Text as="div" size="2" weight="bold">
            To
          </Text>
          <input
            type="date"
            value={s.to}
            onChange={(e) => set((p) => (e.target.value ? p.set('to', e.target.value) : p.delete('to')))}
          />
        </label>
      </Flex>
      <AsOfControl value={s.asOf} onChange={(d) => set((p) => (d ? p.set('as_of', d) : p.delete('as_of')))} />
    </>
  );

  return (
    <Flex direction="column" gap="4">
      <Heading as="h1" size="6">
        Search
      </Heading>
      <search aria-label="Search facts">
        <form onSubmit={submit}>
          <Flex gap="2">
            <Box flexGrow="1">
              <TextField.Root
                size="3"
                aria-label="Search"
                placeholder="core.async channel"
                value={text}
                onChange={(e) => setText(e.target.value)}
                maxLength={2000}
              >
                <TextField.Slot>
                  <MagnifyingGlassIcon />
                </TextField.Slot>
              </TextField.Root>
            </Box>
            <Button size="3" type="submit">
              Search
            </Button>
          </Flex>
        </form>
      </search>
      <div className="facets">
        {wide ? (
          <Flex direction="column" gap="4" asChild>
            <aside aria-label="Filters">{filters}</aside>
          </Flex>
        ) : (
          <details>
            <summary>
              <Text size="2" weight="bold">
                Filters{active.length + (s.asOf ? 1 : 0) ? ` (${active.length + (s.asOf ? 1 : 0)} on)` : ''}
              </Text>
            </summary>
            <Flex direction="column" gap="4" mt="3" asChild>
              <aside aria-label="Filters">{filters}</aside>
            </Flex>
          </details>
        )}
        <Flex direction="column" gap="3" style={{ minWidth: 0 }} asChild>
          <section aria-label="Results">
            {active.length || s.asOf ? (
              <Flex gap="2" wrap="wrap" aria-label="Active filters">
                {active.map(([k, v]) => (
                  <Button key={`${k}:${v}`} size="1" variant="soft" onClick={() => toggle(k, v)}>
                    {k}: {v} <Cross2Icon aria-label="remove" />
                  </Button>
                ))}
                {s.asOf ? (
                  <Button
                    size="1"
                    variant="soft"
                    color="amber"
                    highContrast
                    onClick={() => set((p) => p.delete('as_of'))}
                  >
                    as of: {s.asOf.param} <Cross2Icon aria-label="remove: back to now" />
                  </Button>
                ) : null}
              </Flex>
            ) : null}
            {!s.q ? (
              <Empty title="Search the facts Atlas holds.">Keywords and meaning both count (hybrid search).</Empty>
            ) : null}
            {search.isPending && s.q ? <Loading label="Searching" /> : null}
            {search.error ? <ErrorState error={search.error} retry={() => void search.refetch()} /> : null}
            {search.data ? (
              <>
                <Text size="2" color="gray" role="status" data-testid="search-summary">
                  {search.data.total} results · {search.data.search_method} · {Math.round(search.data.query_time_ms)} ms
                  {s.asOf ? ` · as of ${describeAsOf(s.asOf)}` : ''}
                  {search.isPlaceholderData ? ' · updating…' : ''}
                </Text>
                <FreshnessMark freshness={freshnessIn(search.data)} />
                {search.data.results.length === 0 ? (
                  <Empty title="No fact matches.">Try other words, or remove a filter.</Empty>
                ) : null}
                <Flex direction="column" gap="3" asChild>
                  <ol style={{ listStyle: 'none', padding: 0, margin: 0 }}>
                    {search.data.results.map((r) => (
                      <li key={r.memory.id} data-testid="search-result">
                        <Card>
                          <Flex direction="column" gap="2">
                            <Text as="p" size="3" style={{ overflowWrap: 'anywhere' }}>
                              {r.highlights.length ? highlighted(r.highlights[0]!) : r.memory.memory_text}
                            </Text>
                            <Flex gap="2" wrap="wrap" align="center">
                              <Badge>{r.memory.fact_type}</Badge>
                              <Badge color={r.memory.importance === 'high' ? 'red' : 'gray'}>
                                {r.memory.importance}
                              </Badge>
                              {r.memory.topic_tags.slice(0, 3).map((t) => (
                                <Badge key={t} variant="outline" color="gray">
                                  {t}
                                </Badge>
                              ))}
                              <Text size="1" color="gray">
                                {r.memory.author_name} · {formatTime(r.memory.message_ts)} · score {r.score.toFixed(2)}
                              </Text>
                            </Flex>
                            <Flex gap="3" wrap="wrap">
                              <RLink asChild size="2">
                                <Link to={`/memories/${encodeURIComponent(r.memory.id)}`}>Fact</Link>
                              </RLink>
                              <RLink asChild size="2">
                                <Link to={`/memories/${encodeURIComponent(r.memory.id)}/message`}>
                                  Message in context
                                </Link>
                              </RLink>
                              <RLink asChild size="2">
                                <Link to={`/memories/${encodeURIComponent(r.memory.id)}/channel`}>Channel</Link>
                              </RLink>
                              {safeHref(r.citation?.permalink) ? (
                                <RLink
                                  size="2"
                                  href={safeHref(r.citation?.permalink)}
                                  target="_blank"
                                  rel="noopener noreferrer"
                                >
                                  Permalink
                                </RLink>
                              ) : null}
                            </Flex>
                          </Flex>
                        </Card>
                      </li>
                    ))}
                  </ol>
                </Flex>
                {search.data.total > s.limit && s.limit < 50 ? (
                  <Button
                    variant="soft"
                    onClick={() =>
                      setParams((p) => {
                        const n = new URLSearchParams(p);
                        n.set('limit', String(Math.min(50, s.limit + PAGE)));
                        return n;
                      })
                    }
                  >
                    Show more
                  </Button>
                ) : null}
              </>
            ) : null}
          </section>
        </Flex>
      </div>
    </Flex>
  );
};

/** A facet: a checkbox per value with the API's count for it. */
const FacetGroup = ({
  title,
  values,
  counts,
  selected,
  onToggle,
}: {
  title: string;
  values: readonly string[];
  counts: Record<string, number> | undefined;
  selected: string[];
  onToggle: (v: string) => void;
}) =>
  values.length ? (
    <fieldset style={{ border: 0, padding: 0, margin: 0 }}>
      <Text as="div" size="2" weight="bold" mb="1" asChild>
        <legend>{title}</legend>
      </Text>
      <Flex direction="column" gap="1">
        {values.map((v) => (
          <Text as="label" size="2" key={v}>
            <Flex gap="2" align="center">
              <Checkbox checked={selected.includes(v)} onCheckedChange={() => onToggle(v)} />
              {v.replace('_', ' ')}
              <Text color="gray" size="1" data-testid={`facet-${title}-${v}`}>
                {counts?.[v] ?? 0}
              </Text>
            </Flex>
          </Text>
        ))}
      </Flex>
    </fieldset>
  ) : null;

/** A free-text filter value (entity, author) added on Enter. */
const TagInput = ({ label, onAdd }: { label: string; onAdd: (v: string) => void }) => {
  const [v, setV] = useState('');
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (v.trim()) onAdd(v.trim());
        setV('');
      }}
    >
      <Text as="label" size="2" weight="bold">
        {label}
        <TextField.Root
          size="1"
          value={v}
          onChange={(e) => setV(e.target.value)}
          placeholder={`Add ${label.toLowerCase()}…`}
        />
      </Text>
    </form>
  );
};

/**
 * `/memories/:memoryId/:target?`: resolves a fact (GET /api/memories/{memory_id}) to where it lives: its fact in the
 * channel's facts tab (default), its message in context (`message`), or its channel (`channel`).
 */
export const MemoryRedirect = () => {
  const { memoryId, target } = useParams();
  const memory = useQuery({
    queryKey: ['memory', memoryId],
    queryFn: () => unwrap(api.GET('/api/memories/{memory_id}', { params: { path: { memory_id: memoryId! } } })),
  });
  if (memory.isPending) return <Loading label="Opening the fact" />;
  if (memory.error) return <ErrorState error={memory.error} retry={() => void memory.refetch()} />;
  const m = memory.data as { channel_id: string; source_message_id: string; id: string };
  const channel = `/channels/${encodeURIComponent(m.channel_id)}`;
  const to =
    target === 'message'
      ? `${channel}/messages?message=${encodeURIComponent(m.source_message_id)}`
      : target === 'channel'
        ? channel
        : `${channel}/facts?memory=${encodeURIComponent(m.id)}`;
  return <Navigate to={to} replace />;
};
