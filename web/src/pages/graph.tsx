import { ArrowDownIcon, MagnifyingGlassIcon } from '@radix-ui/react-icons';
import {
  Badge,
  Box,
  Button,
  Card,
  Checkbox,
  Flex,
  Heading,
  Link as RLink,
  SegmentedControl,
  Select,
  Table,
  Text,
  TextField,
} from '@radix-ui/themes';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type FormEvent, type KeyboardEvent, type ReactNode, useEffect, useId, useMemo, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { ApiError, api, unwrap } from '../api/client';
import { formatCount, formatTime, useChannels, useWide } from '../api/hooks';
import { type AsOf, AsOfControl, AsOfNotice, describeAsOf, parseAsOf } from '../components/as-of';
import { type CitationLike, CitationMarker } from '../components/citation';
import { ENTITY_TYPES, type GraphEdge, type GraphNode, GraphView, TYPE_COLOR } from '../components/graph-view';
import { LifecycleList } from '../components/lifecycle';
import { Empty, ErrorState, Loading } from '../components/states';

/** Node caps offered (the subgraph route's `limit`: entities besides the seeds; max 200, spec "Graph"). */
const CAPS = [25, 50, 100] as const;
const DEPTHS = [1, 2, 3] as const;
/** Hops a path may take (the path route's max_depth, 1..6). */
const HOPS = [1, 2, 3, 4, 5, 6] as const;

/**
 * The explorer's state in the URL (relative to the current path, so it works embedded in a channel's tab too):
 * `entity` (the centre, a name), `depth` (1..3), `cap` (node cap), `types` (the entity types shown, comma-separated;
 * absent: all), `node` (the selected entity, default the centre), `from`, `to` and `hops` (the path finder), `channel`
 * (only when the explorer is not given one), `as_of` (the graph as it stood then: a day read as its end in UTC, or an
 * instant; AsOf, issue 27 point 2).
 */
const stateOf = (p: URLSearchParams, fixedChannel: string | undefined) => {
  const depth = Number(p.get('depth'));
  const cap = Number(p.get('cap'));
  const hops = Number(p.get('hops'));
  const types = p.get('types');
  return {
    channel: fixedChannel ?? p.get('channel') ?? undefined,
    entity: p.get('entity') ?? '',
    depth: (DEPTHS as readonly number[]).includes(depth) ? depth : 1,
    cap: (CAPS as readonly number[]).includes(cap) ? cap : 25,
    types: types === null ? [...ENTITY_TYPES] : types.split(',').filter(Boolean),
    node: p.get('node') ?? '',
    from: p.get('from') ?? '',
    to: p.get('to') ?? '',
    hops: (HOPS as readonly number[]).includes(hops) ? hops : 3,
    asOf: parseAsOf(p.get('as_of')),
  };
};

/** `{as_of}` for a graph query as of then (the AsOf's instant), nothing for now. */
const asOfQuery = (asOf: AsOf | null) => (asOf ? { as_of: asOf.instant } : {});

/** What the entity search offers: a name, its type and aliases (from one channel's entities, or every channel's cards). */
interface Suggestion {
  name: string;
  type: string;
  aliases: readonly string[];
}

/**
 * The entities the search looks through: a channel's (GET /api/graph/entities, most mentioned first, the route's
 * maximum of 200), or without a channel the cross-channel cards (GET /api/graph/entities/cards, most facts first, 200);
 * as of `asOf` when given (those that existed then). The API has no name search, so matching happens here.
 */
const useEntityIndex = (channel: string | undefined, asOf: AsOf | null) =>
  useQuery({
    queryKey: ['graph-entity-index', channel ?? null, asOf?.instant ?? 'now'],
    staleTime: 60_000,
    queryFn: async (): Promise<Suggestion[]> => {
      if (channel) {
        const list = await unwrap(
          api.GET('/api/graph/entities', {
            params: { query: { channel_id: channel, limit: 200, ...asOfQuery(asOf) } },
          }),
        );
        return list.map((e) => ({ name: e.name, type: e.type, aliases: e.aliases }));
      }
      const cards = await unwrap(
        api.GET('/api/graph/entities/cards', { params: { query: { limit: 200, ...asOfQuery(asOf) } } }),
      );
      return cards.map((c) => ({ name: c.entity_name, type: c.entity_type, aliases: [] }));
    },
  });

/** The suggestions for a typed text: the name (or alias) itself first, then those that start with it, then those that contain it. */
const matchesOf = (all: readonly Suggestion[], text: string, max = 8): Suggestion[] => {
  const q = text.trim().toLowerCase();
  if (!q) return [];
  const seen = new Set<string>();
  const exact: Suggestion[] = [];
  const starts: Suggestion[] = [];
  const contains: Suggestion[] = [];
  for (const s of all) {
    const names = [s.name, ...s.aliases].map((n) => n.toLowerCase());
    const k = `${s.name}\u0000${s.type}`;
    if (seen.has(k)) continue;
    if (names.includes(q)) exact.push(s);
    else if (names.some((n) => n.startsWith(q))) starts.push(s);
    else if (names.some((n) => n.includes(q))) contains.push(s);
    else continue;
    seen.add(k);
  }
  return [...exact, ...starts, ...contains].slice(0, max);
};

/**
 * An entity input with search-as-you-type: a combobox (arrow keys move through the suggestions, Enter or a click
 * chooses, Escape closes) over useEntityIndex; says so when no entity matches. `onChoose` gets the chosen name (or the
 * typed text on Enter without a suggestion, which the graph routes resolve by name or alias).
 */
const EntityPicker = ({
  label,
  value,
  channel,
  asOf,
  onChoose,
  placeholder,
}: {
  label: string;
  value: string;
  channel: string | undefined;
  asOf: AsOf | null;
  onChoose: (name: string) => void;
  placeholder?: string;
}) => {
  const id = useId();
  const [text, setText] = useState(value);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  useEffect(() => setText(value), [value]);
  const index = useEntityIndex(channel, asOf);
  const matches = matchesOf(index.data ?? [], text);
  const show = open && text.trim().length > 0 && text !== value;
  const choose = (name: string) => {
    setText(name);
    setOpen(false);
    setActive(-1);
    onChoose(name);
  };
  const onKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'ArrowDown' && matches.length) {
      e.preventDefault();
      setOpen(true);
      setActive((a) => (a + 1) % matches.length);
    } else if (e.key === 'ArrowUp' && matches.length) {
      e.preventDefault();
      setActive((a) => (a <= 0 ? matches.length - 1 : a - 1));
    } else if (e.key === 'Escape') setOpen(false);
    else if (e.key === 'Enter') {
      e.preventDefault();
      const pick = matches[active] ?? matches.find((m) => m.name.toLowerCase() === text.trim().toLowerCase());
      if (pick) choose(pick.name);
      else if (text.trim()) choose(text.trim());
    }
  };
  return (
    <Box position="relative" style={{ minWidth: 0 }}>
      <Text as="label" htmlFor={`${id}-input`} size="2" weight="bold">
        {label}
      </Text>
      <TextField.Root
        id={`${id}-input`}
        role="combobox"
        aria-autocomplete="list"
        aria-expanded={show}
        aria-controls={`${id}-list`}
        aria-activedescendant={show && active >= 0 ? `${id}-opt-${active}` : undefined}
        autoComplete="off"
        placeholder={placeholder}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          setOpen(true);
          setActive(-1);
        }}
        onFocus={() => setOpen(true)}
        onBlur={() => setOpen(false)}
        onKeyDown={onKey}
      >
        <TextField.Slot>
          <MagnifyingGlassIcon />
        </TextField.Slot>
      </TextField.Root>
      <Card
        id={`${id}-list`}
        role="listbox"
        aria-label={`${label}: suggestions`}
        style={{
          display: show && matches.length > 0 ? 'block' : 'none',
          position: 'absolute',
          zIndex: 20,
          left: 0,
          right: 0,
          marginTop: 4,
          padding: 4,
        }}
      >
        {matches.map((m, i) => (
          <div
            key={`${m.name}\u0000${m.type}`}
            id={`${id}-opt-${i}`}
            role="option"
            aria-selected={i === active}
            aria-label={`${m.name} (${m.type})`}
            tabIndex={-1}
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => choose(m.name)}
            onKeyDown={() => {}}
            style={{
              padding: '6px 8px',
              borderRadius: 4,
              cursor: 'pointer',
              background: i === active ? 'var(--accent-a4)' : undefined,
            }}
          >
            <Flex justify="between" gap="2">
              <Text size="2">{m.name}</Text>
              <Text size="1" color="gray">
                {m.type}
              </Text>
            </Flex>
          </div>
        ))}
      </Card>
      {show && index.isPending ? (
        <Text size="1" color="gray" role="status">
          Loading entities…
        </Text>
      ) : null}
      {show && index.error ? <ErrorState error={index.error} retry={() => void index.refetch()} /> : null}
      {show && index.data && matches.length === 0 ? (
        <Text as="p" size="2" color="gray" role="status" data-testid="no-entity-match">
          No entity matches “{text.trim()}”{channel ? ' in this channel' : ''}
          {asOf ? ` as of ${describeAsOf(asOf)}` : ''}. Press Enter to try the name anyway.
        </Text>
      ) : null}
    </Box>
  );
};

/** A type's badge: its colour as a dot and its name as text. */
const TypeBadge = ({ type }: { type: string }) => (
  <Badge color="gray" variant="soft">
    <svg width="8" height="8" aria-hidden="true">
      <circle cx="4" cy="4" r="4" fill={TYPE_COLOR[type] ?? 'var(--gray-9)'} />
    </svg>
    {type}
  </Badge>
);

/**
 * The Graph explorer (issue 26 point 6; spec "Graph"): entity search; the neighbourhood of an entity up to depth 3
 * with a node cap and entity-type filters (GET /api/graph/subgraph: seeds first, then up to `limit` others; the type
 * filter hides nodes here, the centre always stays), drawn as a node-link diagram and listed as tables of the same
 * nodes and edges; the selected entity's card (GET /api/graph/entities/{name}/card: summary, key facts with their
 * sources from GET /api/memories, related entities that re-centre, channels); a path between two entities (GET
 * /api/graph/path, at most 6 hops); the channel's decisions with their statuses and supersession chains (GET
 * /api/graph/decisions, following superseded_by). `channelId` fixes the channel (the channel workspace's graph tab);
 * without it the explorer offers a channel choice and searches every channel's entity cards. An "As of" day
 * (`?as_of=`, GraphAsOf) reads all of it as the graph stood then: every graph call takes `as_of`. All state lives in
 * the URL's search parameters, relative to the current path, so links within the explorer keep it.
 */
export const GraphExplorer = ({ channelId }: { channelId?: string }) => {
  const [params, setParams] = useSearchParams();
  const s = stateOf(params, channelId);
  const wide = useWide();
  const channels = useChannels();
  const channelName = (id: string) => channels.data?.find((c) => c.id === id)?.name ?? id;

  // From the address as it is now, not as this render saw it: two quick changes (an entity, then a depth) both stay.
  const set = (mutate: (p: URLSearchParams) => void) => {
    const next = new URLSearchParams(window.location.search);
    mutate(next);
    setParams(next);
  };
  /** The search of a URL change (for links that keep the rest of the state). */
  const searchWith = (mutate: (p: URLSearchParams) => void) => {
    const next = new URLSearchParams(params);
    mutate(next);
    return `?${next.toString()}`;
  };
  const centreOn = (p: URLSearchParams, name: string) => {
    p.set('entity', name);
    p.delete('node');
  };

  const sub = useQuery({
    queryKey: ['graph-subgraph', s.entity, s.depth, s.cap, s.channel ?? null, s.asOf?.instant ?? 'now'],
    enabled: s.entity.length > 0,
    placeholderData: keepPreviousData,
    retry: (n, e) => !(e instanceof ApiError && e.status < 500) && n < 2,
    queryFn: () =>
      unwrap(
        api.GET('/api/graph/subgraph', {
          params: {
            query: {
              entities: s.entity,
              depth: s.depth,
              limit: s.cap,
              ...(s.channel ? { channel_id: s.channel } : {}),
              ...asOfQuery(s.asOf),
            },
          },
        }),
      ),
  });

  // Without a channel a name can stand for entities of several channels: one node per (name, type) then, since the
  // edges name their ends.
  const graph = useMemo(() => {
    const data = sub.data;
    if (!data) return null;
    const nodes: (GraphNode & { channel_id: string })[] = [];
    const seen = new Set<string>();
    for (const n of data.nodes) {
      const k = s.channel ? n.id : `${n.name}\u0000${n.type}`;
      if (!seen.has(k)) {
        seen.add(k);
        nodes.push(n);
      }
    }
    const centre = s.entity.toLowerCase();
    const seeds = nodes.filter((n) => n.name.toLowerCase() === centre);
    const seedIds = (seeds.length ? seeds : nodes.slice(0, 1)).map((n) => n.id);
    return { nodes, edges: data.edges, seedIds };
  }, [sub.data, s.channel, s.entity]);

  const shown = useMemo(() => {
    if (!graph) return null;
    const seeds = new Set(graph.seedIds);
    const nodes = graph.nodes.filter((n) => seeds.has(n.id) || s.types.includes(n.type));
    const names = new Set(nodes.map((n) => n.name));
    const edges = graph.edges.filter((e) => names.has(e.source) && names.has(e.target));
    return { nodes, edges, hidden: graph.nodes.length - nodes.length };
  }, [graph, s.types]);

  const selectedName = s.node || s.entity;
  const selectedNode = graph?.nodes.find((n) => n.name === selectedName) ?? null;
  const select = (n: GraphNode) => set((p) => p.set('node', n.name));
  const notFound = sub.error instanceof ApiError && sub.error.status === 404;
  // The decisions shown: the given channel's, else the centre's channel.
  const centreChannel = graph?.nodes.find((n) => graph.seedIds.includes(n.id))?.channel_id;
  const decisionsChannel = s.channel ?? centreChannel;

  const setAsOf = (day: string | null) =>
    set((p) => {
      if (day) p.set('as_of', day);
      else p.delete('as_of');
    });

  const controls = (
    <Flex direction="column" gap="3">
      <GraphAsOf asOf={s.asOf} onChange={setAsOf} />
      <Flex gap="3" wrap="wrap" align="end">
        {channelId ? null : (
          <Box style={{ minWidth: 180 }}>
            <Text as="label" htmlFor="graph-channel" size="2" weight="bold">
              Channel
            </Text>
            <Select.Root
              value={s.channel ?? 'all'}
              onValueChange={(v) =>
                set((p) => {
                  if (v === 'all') p.delete('channel');
                  else p.set('channel', v);
                })
              }
            >
              <Select.Trigger id="graph-channel" style={{ width: '100%' }} />
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
        )}
        <Box flexGrow="1" style={{ minWidth: 200 }}>
          <EntityPicker
            label="Entity"
            value={s.entity}
            channel={s.channel}
            asOf={s.asOf}
            placeholder="A person, project, technology…"
            onChoose={(name) => set((p) => centreOn(p, name))}
          />
        </Box>
        <Box>
          <Text as="div" size="2" weight="bold" id="graph-depth-label">
            Depth
          </Text>
          <SegmentedControl.Root
            aria-labelledby="graph-depth-label"
            value={String(s.depth)}
            onValueChange={(v) => set((p) => p.set('depth', v))}
          >
            {DEPTHS.map((d) => (
              <SegmentedControl.Item key={d} value={String(d)} aria-label={`Depth ${d}`}>
                {d}
              </SegmentedControl.Item>
            ))}
          </SegmentedControl.Root>
        </Box>
        <Box>
          <Text as="label" htmlFor="graph-cap" size="2" weight="bold">
            Node cap
          </Text>
          <Select.Root value={String(s.cap)} onValueChange={(v) => set((p) => p.set('cap', v))}>
            <Select.Trigger id="graph-cap" style={{ display: 'flex' }} />
            <Select.Content position="popper">
              {CAPS.map((c) => (
                <Select.Item key={c} value={String(c)}>
                  {c} nodes
                </Select.Item>
              ))}
            </Select.Content>
          </Select.Root>
        </Box>
      </Flex>
      <fieldset style={{ border: 'none', margin: 0, padding: 0, minWidth: 0 }}>
        <Text as="div" size="2" weight="bold" asChild>
          <legend>Entity types shown</legend>
        </Text>
        <Flex gap="3" wrap="wrap" mt="1">
          {ENTITY_TYPES.map((t) => (
            <Text as="label" size="2" key={t}>
              <Flex gap="1" align="center">
                <Checkbox
                  checked={s.types.includes(t)}
                  onCheckedChange={(on) =>
                    set((p) => {
                      const next = on ? [...s.types, t] : s.types.filter((x) => x !== t);
                      if (next.length === ENTITY_TYPES.length) p.delete('types');
                      else p.set('types', ENTITY_TYPES.filter((x) => next.includes(x)).join(','));
                    })
                  }
                />
                <svg width="10" height="10" aria-hidden="true">
                  <circle cx="5" cy="5" r="5" fill={TYPE_COLOR[t]} />
                </svg>
                {t}
              </Flex>
            </Text>
          ))}
        </Flex>
      </fieldset>
    </Flex>
  );

  let neighbourhood: ReactNode;
  if (!s.entity)
    neighbourhood = <StartHint channel={s.channel} asOf={s.asOf} onPick={(n) => set((p) => centreOn(p, n))} />;
  else if (notFound)
    neighbourhood = (
      <Empty
        title={`No entity matches “${s.entity}”${s.channel ? ` in #${channelName(s.channel)}` : ''}${s.asOf ? ` as of ${describeAsOf(s.asOf)}` : ''}.`}
      >
        {s.asOf
          ? 'It may not have been mentioned yet then: choose a later day, or go back to now.'
          : 'Search for another name, or choose every channel.'}
      </Empty>
    );
  else if (sub.error) neighbourhood = <ErrorState error={sub.error} retry={() => void sub.refetch()} />;
  else if (sub.isPending || !graph || !shown) neighbourhood = <Loading label="Loading the neighbourhood" lines={6} />;
  else {
    const summary = (
      <Text as="p" size="2" color="gray" data-testid="graph-summary" role="status">
        {shown.nodes.length} of {graph.nodes.length} entities and {shown.edges.length} relationships around {s.entity}{' '}
        at depth {s.depth}
        {s.asOf ? ` as of ${describeAsOf(s.asOf)}` : ''}
        {graph.nodes.length - graph.seedIds.length >= s.cap ? ` (capped at ${s.cap})` : ''}
        {shown.hidden ? `; ${shown.hidden} hidden by the type filter` : ''}.{sub.isFetching ? ' Updating…' : ''}
      </Text>
    );
    const diagram =
      shown.nodes.length > 0 ? (
        <GraphView
          nodes={shown.nodes}
          edges={shown.edges}
          seedIds={graph.seedIds}
          selectedId={selectedNode?.id ?? null}
          onSelect={select}
          label={`Neighbourhood of ${s.entity}: ${shown.nodes.length} entities`}
        />
      ) : null;
    const list = (
      <GraphLists
        nodes={shown.nodes}
        edges={shown.edges}
        seedIds={graph.seedIds}
        selected={selectedNode?.name ?? null}
        onSelect={select}
        channelName={s.channel ? undefined : channelName}
      />
    );
    neighbourhood = (
      <Flex direction="column" gap="3">
        {summary}
        {graph.nodes.length <= graph.seedIds.length ? (
          <Empty title={`${s.entity} has no related entities yet.`} />
        ) : null}
        {/* At narrow widths the list comes first: it is what a small screen and a keyboard use best. */}
        {wide ? (
          <>
            {diagram}
            {list}
          </>
        ) : (
          <>
            {list}
            {diagram}
          </>
        )}
      </Flex>
    );
  }

  return (
    <Flex direction="column" gap="5">
      {controls}
      <div
        style={{
          display: 'grid',
          gridTemplateColumns: wide ? 'minmax(0, 1fr) minmax(280px, 360px)' : 'minmax(0, 1fr)',
          gap: 24,
          alignItems: 'start',
        }}
      >
        <section aria-labelledby="graph-neighbourhood-h" style={{ minWidth: 0 }}>
          <Heading as="h2" size="4" mb="2" id="graph-neighbourhood-h">
            Neighbourhood
          </Heading>
          {neighbourhood}
        </section>
        <section aria-labelledby="graph-card-h" style={{ minWidth: 0 }}>
          <Heading as="h2" size="4" mb="2" id="graph-card-h">
            Entity card
          </Heading>
          {selectedName ? (
            <EntityCard
              name={selectedName}
              channelOfNode={selectedNode && 'channel_id' in selectedNode ? String(selectedNode.channel_id) : undefined}
              channelName={channelName}
              centreSearch={(name) => searchWith((p) => centreOn(p, name))}
              isCentre={selectedName === s.entity}
              asOf={s.asOf}
            />
          ) : (
            <Text size="2" color="gray">
              Choose an entity to see its card.
            </Text>
          )}
        </section>
      </div>
      <div
        style={{
          display: 'grid',
          gridTemplateColumns: wide ? 'minmax(0, 1fr) minmax(0, 1fr)' : 'minmax(0, 1fr)',
          gap: 24,
          alignItems: 'start',
        }}
      >
        <PathFinder
          state={s}
          set={set}
          centreSearch={(name) => searchWith((p) => centreOn(p, name))}
          channelName={channelName}
        />
        <Decisions
          channel={decisionsChannel}
          asOf={s.asOf}
          channelName={channelName}
          centreSearch={(name) => searchWith((p) => centreOn(p, name))}
        />
      </div>
    </Flex>
  );
};

/**
 * The graph explorer's "As of" (issue 27 point 2): a day (its end, UTC) the whole explorer reads the graph as of (every
 * graph call takes `as_of`), kept in the address as `?as_of=` (which may also name an instant, AsOf). While one is
 * chosen, an amber notice says so and offers the way back to now.
 */
const GraphAsOf = ({ asOf, onChange }: { asOf: AsOf | null; onChange: (day: string | null) => void }) => (
  <Flex direction="column" gap="2">
    <AsOfControl value={asOf} onChange={onChange} clearable={false} />
    {asOf ? (
      <AsOfNotice
        asOf={asOf}
        what="graph"
        detail="the entities, relationships, cards and decisions as they stood then."
        testId="graph-as-of"
        onBack={() => onChange(null)}
      />
    ) : null}
  </Flex>
);

/** Before an entity is chosen: the most mentioned entities of the channel (or every channel) to start from. */
const StartHint = ({
  channel,
  asOf,
  onPick,
}: {
  channel: string | undefined;
  asOf: AsOf | null;
  onPick: (name: string) => void;
}) => {
  const index = useEntityIndex(channel, asOf);
  if (index.isPending) return <Loading label="Loading entities" />;
  if (index.error) return <ErrorState error={index.error} retry={() => void index.refetch()} />;
  if (index.data.length === 0)
    return asOf ? (
      <Empty title={`This graph had no entities yet as of ${describeAsOf(asOf)}.`}>
        Choose a later day, or go back to now.
      </Empty>
    ) : (
      <Empty title="This graph has no entities yet.">Entities appear as messages are imported or synced.</Empty>
    );
  return (
    <Flex direction="column" gap="2">
      <Text size="2" color="gray">
        Search for an entity, or start from one of the most mentioned:
      </Text>
      <Flex gap="2" wrap="wrap">
        {index.data.slice(0, 12).map((e) => (
          <Button key={`${e.name}\u0000${e.type}`} size="1" variant="soft" color="gray" onClick={() => onPick(e.name)}>
            {e.name}
            <Text size="1" color="gray">
              {e.type}
            </Text>
          </Button>
        ))}
      </Flex>
    </Flex>
  );
};

/**
 * The accessible view of the same graph: a table of the nodes (each name a button that selects it) and a table of the
 * edges (source, relationship, target, confidence). Wide tables scroll inside themselves, never the page.
 */
const GraphLists = ({
  nodes,
  edges,
  seedIds,
  selected,
  onSelect,
  channelName,
}: {
  nodes: readonly (GraphNode & { channel_id?: string })[];
  edges: readonly GraphEdge[];
  seedIds: readonly string[];
  selected: string | null;
  onSelect: (n: GraphNode) => void;
  channelName: ((id: string) => string) | undefined;
}) => (
  <Flex direction="column" gap="3">
    <Table.Root size="1" variant="surface" aria-label="Entities" data-testid="graph-node-list">
      <Table.Header>
        <Table.Row>
          <Table.ColumnHeaderCell>Entity</Table.ColumnHeaderCell>
          <Table.ColumnHeaderCell>Type</Table.ColumnHeaderCell>
          {channelName ? <Table.ColumnHeaderCell>Channel</Table.ColumnHeaderCell> : null}
        </Table.Row>
      </Table.Header>
      <Table.Body>
        {nodes.map((n) => (
          <Table.Row key={n.id} data-testid="graph-list-node" data-name={n.name}>
            <Table.RowHeaderCell py="1" style={selected === n.name ? { background: 'var(--accent-a3)' } : undefined}>
              <RLink asChild size="2" weight={selected === n.name ? 'bold' : 'regular'}>
                <button
                  type="button"
                  aria-pressed={selected === n.name}
                  onClick={() => onSelect(n)}
                  style={{ background: 'none', border: 'none', padding: 0, textAlign: 'left', cursor: 'pointer' }}
                >
                  {n.name}
                </button>
              </RLink>
              {seedIds.includes(n.id) ? (
                <Text size="1" color="gray">
                  {' '}
                  (centre)
                </Text>
              ) : null}
            </Table.RowHeaderCell>
            <Table.Cell py="1">
              <TypeBadge type={n.type} />
            </Table.Cell>
            {channelName ? (
              <Table.Cell py="1">{n.channel_id ? `#${channelName(n.channel_id)}` : '—'}</Table.Cell>
            ) : null}
          </Table.Row>
        ))}
      </Table.Body>
    </Table.Root>
    {edges.length ? (
      <details>
        <summary>
          <Text size="2" weight="bold">
            Relationships ({edges.length})
          </Text>
        </summary>
        <Table.Root size="1" variant="surface" aria-label="Relationships" mt="2" data-testid="graph-edge-list">
          <Table.Header>
            <Table.Row>
              <Table.ColumnHeaderCell>From</Table.ColumnHeaderCell>
              <Table.ColumnHeaderCell>Relationship</Table.ColumnHeaderCell>
              <Table.ColumnHeaderCell>To</Table.ColumnHeaderCell>
              <Table.ColumnHeaderCell>Confidence</Table.ColumnHeaderCell>
            </Table.Row>
          </Table.Header>
          <Table.Body>
            {edges.map((e) => (
              <Table.Row key={e.id}>
                <Table.Cell>{e.source}</Table.Cell>
                <Table.Cell>
                  <code>{e.type}</code>
                </Table.Cell>
                <Table.Cell>{e.target}</Table.Cell>
                <Table.Cell>{e.confidence.toFixed(2)}</Table.Cell>
              </Table.Row>
            ))}
          </Table.Body>
        </Table.Root>
      </details>
    ) : null}
  </Flex>
);

/**
 * An entity's card (GET /api/graph/entities/{name}/card, spec "Entity card"): name, type, summary, fact counts by type,
 * last mention, key facts each with its source (the fact of that text among the entity's facts in its channels, GET
 * /api/memories?entity=, shown as a citation with author, channel, time and permalink), related entities as links that
 * re-centre the explorer, and its channels. The decisions and action items its facts opened (the card's `lifecycle`:
 * state, owner, due date, history with the cited messages; LifecycleList). A Decision's card adds its supersession chain.
 * With `asOf` every call takes `as_of`: the card, its facts and its decisions as they stood then; its channel links
 * open the channel's facts about the entity as of that day, and each source adds its fact as of then (facts tab).
 */
const EntityCard = ({
  name,
  channelOfNode,
  channelName,
  centreSearch,
  isCentre,
  asOf,
}: {
  name: string;
  channelOfNode: string | undefined;
  channelName: (id: string) => string;
  centreSearch: (name: string) => string;
  isCentre: boolean;
  asOf: AsOf | null;
}) => {
  const at = asOf?.instant ?? 'now';
  const card = useQuery({
    queryKey: ['graph-card', name, at],
    retry: (n, e) => !(e instanceof ApiError && e.status < 500) && n < 2,
    queryFn: () =>
      unwrap(api.GET('/api/graph/entities/{ref}/card', { params: { path: { ref: name }, query: asOfQuery(asOf) } })),
  });
  const channelsOfCard = card.data?.channel_ids ?? [];
  const sourceChannels = [...new Set([...(channelOfNode ? [channelOfNode] : []), ...channelsOfCard])].slice(0, 5);
  const sources = useQuery({
    queryKey: ['graph-card-sources', card.data?.entity_name, sourceChannels, at],
    enabled: !!card.data,
    staleTime: 60_000,
    queryFn: async () => {
      const lists = await Promise.all(
        sourceChannels.map((c) =>
          unwrap(
            api.GET('/api/memories', {
              params: { query: { channel_id: c, entity: card.data!.entity_name, limit: 100, ...asOfQuery(asOf) } },
            }),
          ).catch(() => null),
        ),
      );
      return lists.flatMap((l) => l?.memories ?? []);
    },
  });
  const decisions = useQuery({
    queryKey: ['graph-decisions', channelOfNode ?? channelsOfCard[0], at],
    enabled: card.data?.entity_type === 'Decision' && !!(channelOfNode ?? channelsOfCard[0]),
    queryFn: () =>
      unwrap(
        api.GET('/api/graph/decisions', {
          params: { query: { channel_id: (channelOfNode ?? channelsOfCard[0])!, ...asOfQuery(asOf) } },
        }),
      ),
  });

  if (card.isPending) return <Loading label="Loading the entity card" />;
  if (card.error)
    return card.error instanceof ApiError && card.error.status === 404 ? (
      <Empty title={`No card for “${name}”${asOf ? ` as of ${describeAsOf(asOf)}` : ''}.`}>
        {asOf ? 'The entity had no facts yet then.' : 'The entity has no facts yet.'}
      </Empty>
    ) : (
      <ErrorState error={card.error} retry={() => void card.refetch()} />
    );
  const c = card.data;
  const citationOf = (text: string, i: number): CitationLike | undefined => {
    const m = sources.data?.find((f) => f.memory_text === text);
    return m
      ? {
          id: `[${i + 1}]`,
          author: m.author_name,
          channel: channelName(m.channel_id),
          timestamp: m.message_ts,
          text_excerpt: m.memory_text,
          permalink: m.permalink,
        }
      : undefined;
  };
  const sourceOf = (text: string) => sources.data?.find((f) => f.memory_text === text);
  const chain = c.entity_type === 'Decision' && decisions.data ? chainThrough(decisions.data, c.entity_name) : null;
  return (
    <Card data-testid="entity-card">
      <Flex direction="column" gap="3">
        <Flex gap="2" align="center" wrap="wrap">
          <Heading as="h3" size="4" data-testid="entity-card-name">
            {c.entity_name}
          </Heading>
          <TypeBadge type={c.entity_type} />
        </Flex>
        <Text size="2">{c.summary}</Text>
        <Flex gap="2" wrap="wrap">
          <Badge color="gray">{formatCount(c.fact_count)} facts</Badge>
          {Object.entries(c.fact_type_breakdown).map(([t, n]) => (
            <Badge key={t} color="gray" variant="outline">
              {t.replace('_', ' ')}: {n}
            </Badge>
          ))}
        </Flex>
        <Text size="1" color="gray">
          Last mentioned {formatTime(c.last_mentioned_at)}
        </Text>
        {isCentre ? null : (
          <Flex>
            <Button asChild size="1" variant="soft">
              <Link to={centreSearch(c.entity_name)}>Centre the graph on {c.entity_name}</Link>
            </Button>
          </Flex>
        )}
        <Box>
          <Heading as="h4" size="2" mb="1">
            Key facts
          </Heading>
          {c.key_facts.length ? (
            <ol data-testid="entity-card-facts" style={{ margin: 0, paddingLeft: 20 }}>
              {c.key_facts.map((f, i) => {
                const src = sourceOf(f);
                return (
                  // biome-ignore lint/suspicious/noArrayIndexKey: facts in the card's order
                  <li key={i} style={{ marginBottom: 6 }}>
                    <Text size="2" data-testid="entity-card-fact">
                      {f}
                    </Text>{' '}
                    {citationOf(f, i) ? <CitationMarker label={`[${i + 1}]`} citation={citationOf(f, i)} /> : null}
                    {src ? (
                      <Text size="1" color="gray" as="div">
                        {src.author_name} · {formatTime(src.message_ts)} ·{' '}
                        <RLink asChild>
                          <Link
                            to={`/channels/${encodeURIComponent(src.channel_id)}/messages?message=${encodeURIComponent(src.source_message_id)}`}
                          >
                            message in context
                          </Link>
                        </RLink>
                        {asOf ? (
                          <>
                            {' · '}
                            <RLink asChild>
                              <Link
                                to={`/channels/${encodeURIComponent(src.channel_id)}/facts?memory=${encodeURIComponent(src.id)}&as_of=${encodeURIComponent(asOf.param)}`}
                              >
                                the fact as of then
                              </Link>
                            </RLink>
                          </>
                        ) : null}
                      </Text>
                    ) : null}
                  </li>
                );
              })}
            </ol>
          ) : (
            <Text size="2" color="gray">
              No key facts.
            </Text>
          )}
        </Box>
        <LifecycleList items={c.lifecycle} />
        {chain && chain.length > 1 ? (
          <Box>
            <Heading as="h4" size="2" mb="1">
              Supersession chain
            </Heading>
            <Chain chain={chain} centreSearch={centreSearch} current={c.entity_name} />
          </Box>
        ) : null}
        <Box>
          <Heading as="h4" size="2" mb="1">
            Related entities
          </Heading>
          {c.related_entities.length ? (
            <Flex gap="2" wrap="wrap" asChild>
              <ul style={{ listStyle: 'none', margin: 0, padding: 0 }} data-testid="entity-card-related">
                {c.related_entities.map((r) => (
                  <li key={`${r.name}\u0000${r.type}\u0000${r.relationship}`}>
                    <RLink asChild size="2">
                      <Link
                        to={centreSearch(r.name)}
                        aria-label={`${r.name} (${r.type}, ${r.relationship}): centre on it`}
                      >
                        {r.name}
                      </Link>
                    </RLink>{' '}
                    <Text size="1" color="gray">
                      {r.relationship}
                    </Text>
                  </li>
                ))}
              </ul>
            </Flex>
          ) : (
            <Text size="2" color="gray">
              No related entities.
            </Text>
          )}
        </Box>
        <Box>
          <Heading as="h4" size="2" mb="1">
            Channels
          </Heading>
          <Flex gap="2" wrap="wrap">
            {c.channel_ids.map((id) => (
              <RLink key={id} asChild size="2">
                <Link
                  to={
                    asOf
                      ? `/channels/${encodeURIComponent(id)}/facts?entity=${encodeURIComponent(c.entity_name)}&as_of=${encodeURIComponent(asOf.param)}`
                      : `/channels/${encodeURIComponent(id)}`
                  }
                >
                  #{channelName(id)}
                </Link>
              </RLink>
            ))}
          </Flex>
        </Box>
      </Flex>
    </Card>
  );
};

/**
 * The path finder (GET /api/graph/path): two entities (search as you type), at most `hops` hops; the shortest path as a
 * chain, node, relationship (with its direction), node…; "no path" when there is none.
 */
const PathFinder = ({
  state: s,
  set,
  centreSearch,
  channelName,
}: {
  state: ReturnType<typeof stateOf>;
  set: (m: (p: URLSearchParams) => void) => void;
  centreSearch: (name: string) => string;
  channelName: (id: string) => string;
}) => {
  const path = useQuery({
    queryKey: ['graph-path', s.from, s.to, s.hops, s.channel ?? null, s.asOf?.instant ?? 'now'],
    enabled: !!s.from && !!s.to,
    retry: (n, e) => !(e instanceof ApiError && e.status < 500) && n < 2,
    queryFn: () =>
      unwrap(
        api.GET('/api/graph/path', {
          params: {
            query: {
              source: s.from,
              target: s.to,
              max_depth: s.hops,
              ...(s.channel ? { channel_id: s.channel } : {}),
              ...asOfQuery(s.asOf),
            },
          },
        }),
      ),
  });
  const onSubmit = (e: FormEvent) => e.preventDefault();
  let result: ReactNode = null;
  if (!s.from || !s.to)
    result = (
      <Text size="2" color="gray">
        Choose two entities to see how they connect.
      </Text>
    );
  else if (path.isPending) result = <Loading label="Finding a path" />;
  else if (path.error)
    result =
      path.error instanceof ApiError && path.error.status === 404 ? (
        <Empty title="No entity matches one of these names.">{path.error.message}</Empty>
      ) : (
        <ErrorState error={path.error} retry={() => void path.refetch()} />
      );
  else if (path.data.length === null || path.data.nodes.length === 0)
    result = (
      <Empty title={`No path between ${s.from} and ${s.to}`}>
        within {s.hops} hop{s.hops === 1 ? '' : 's'}
        {s.channel ? ` in #${channelName(s.channel)}` : ''}
        {s.asOf ? ` as of ${describeAsOf(s.asOf)}` : ''}.
      </Empty>
    );
  else {
    const { nodes, edges } = path.data;
    result = (
      <Flex direction="column" gap="2">
        <Text size="2" color="gray" role="status">
          {path.data.length} hop{path.data.length === 1 ? '' : 's'} from {s.from} to {s.to}.
        </Text>
        <ol
          data-testid="path-chain"
          aria-label={`Path from ${s.from} to ${s.to}`}
          style={{ listStyle: 'none', margin: 0, padding: 0, display: 'flex', flexWrap: 'wrap', gap: 6 }}
        >
          {nodes.map((n, i) => {
            const e = edges[i];
            const forward = e ? e.source === n.name : true;
            return (
              <li key={n.id} style={{ display: 'flex', alignItems: 'center', gap: 6, flexWrap: 'wrap' }}>
                <Card size="1" data-testid="path-node" data-name={n.name}>
                  <Flex direction="column">
                    <RLink asChild size="2" weight="medium">
                      <Link to={centreSearch(n.name)}>{n.name}</Link>
                    </RLink>
                    <Text size="1" color="gray">
                      {n.type}
                    </Text>
                  </Flex>
                </Card>
                {e ? (
                  <Text size="1" color="gray" data-testid="path-edge">
                    {forward ? '' : '← '}
                    <code>{e.type}</code>
                    {forward ? ' →' : ''}
                  </Text>
                ) : null}
              </li>
            );
          })}
        </ol>
      </Flex>
    );
  }
  return (
    <section aria-labelledby="graph-path-h" style={{ minWidth: 0 }}>
      <Heading as="h2" size="4" mb="2" id="graph-path-h">
        Path between two entities
      </Heading>
      <form onSubmit={onSubmit} aria-label="Path finder">
        <Flex gap="3" wrap="wrap" align="end" mb="3">
          <Box flexGrow="1" style={{ minWidth: 160 }}>
            <EntityPicker
              label="From"
              value={s.from}
              channel={s.channel}
              asOf={s.asOf}
              onChoose={(n) => set((p) => p.set('from', n))}
            />
          </Box>
          <Box flexGrow="1" style={{ minWidth: 160 }}>
            <EntityPicker
              label="To"
              value={s.to}
              channel={s.channel}
              asOf={s.asOf}
              onChoose={(n) => set((p) => p.set('to', n))}
            />
          </Box>
          <Box>
            <Text as="label" htmlFor="graph-hops" size="2" weight="bold">
              At most
            </Text>
            <Select.Root value={String(s.hops)} onValueChange={(v) => set((p) => p.set('hops', v))}>
              <Select.Trigger id="graph-hops" style={{ display: 'flex' }} />
              <Select.Content position="popper">
                {HOPS.map((h) => (
                  <Select.Item key={h} value={String(h)}>
                    {h} hop{h === 1 ? '' : 's'}
                  </Select.Item>
                ))}
              </Select.Content>
            </Select.Root>
          </Box>
          {s.from || s.to ? (
            <Button
              type="button"
              variant="soft"
              color="gray"
              onClick={() =>
                set((p) => {
                  p.delete('from');
                  p.delete('to');
                })
              }
            >
              Clear
            </Button>
          ) : null}
        </Flex>
      </form>
      {result}
    </section>
  );
};

/** A decision record as GET /api/graph/decisions gives it (spec "Decision record"). */
interface Decision {
  name: string;
  decided_by: string | null;
  status: string;
  superseded_by: string | null;
  date: string;
  context: string | null;
}

/**
 * The supersession chain through one decision: its predecessors (decisions whose superseded_by names it, the first
 * one found each step) then itself and its successors (following superseded_by), oldest first; a name no record
 * holds ends the chain as a bare name; a cycle stops it.
 */
const chainThrough = (all: readonly Decision[], name: string): (Decision | string)[] => {
  const byName = new Map(all.map((d) => [d.name, d]));
  const seen = new Set<string>([name]);
  const before: Decision[] = [];
  for (let cur = name; ; ) {
    const prev = all.find((d) => d.superseded_by === cur && !seen.has(d.name));
    if (!prev) break;
    seen.add(prev.name);
    before.unshift(prev);
    cur = prev.name;
  }
  const after: (Decision | string)[] = [];
  for (let next = byName.get(name)?.superseded_by ?? null; next && !seen.has(next); ) {
    seen.add(next);
    const d = byName.get(next);
    after.push(d ?? next);
    next = d?.superseded_by ?? null;
  }
  return [...before, byName.get(name) ?? name, ...after];
};

/** The chains of a channel's decisions: one per decision that was superseded and supersedes none, oldest first. */
const chainsOf = (all: readonly Decision[]): (Decision | string)[][] => {
  const targets = new Set(all.map((d) => d.superseded_by).filter(Boolean));
  return all
    .filter((d) => d.superseded_by && !targets.has(d.name))
    .map((d) => chainThrough(all, d.name))
    .sort((a, b) => b.length - a.length);
};

const STATUS_COLOR: Record<string, 'green' | 'gray' | 'amber' | 'blue'> = {
  implemented: 'green',
  superseded: 'gray',
  agreed: 'blue',
};

/** A supersession chain: each decision (a link that centres the graph on it) with its status, an arrow between. */
const Chain = ({
  chain,
  centreSearch,
  current,
}: {
  chain: (Decision | string)[];
  centreSearch: (name: string) => string;
  current?: string;
}) => (
  <ol
    data-testid="decision-chain"
    aria-label="Supersession chain, oldest first"
    style={{ listStyle: 'none', margin: 0, padding: 0, display: 'flex', flexDirection: 'column', gap: 4 }}
  >
    {chain.map((d, i) => {
      const name = typeof d === 'string' ? d : d.name;
      return (
        <li key={name} data-testid="decision-chain-item" data-name={name}>
          {i > 0 ? (
            <Text as="div" size="1" color="gray">
              <ArrowDownIcon aria-hidden="true" /> superseded by
            </Text>
          ) : null}
          <Flex gap="2" align="center" wrap="wrap">
            <RLink asChild size="2" weight={name === current ? 'bold' : 'regular'}>
              <Link to={centreSearch(name)} aria-current={name === current ? 'true' : undefined}>
                {name}
              </Link>
            </RLink>
            {typeof d === 'string' ? (
              <Text size="1" color="gray">
                (no record)
              </Text>
            ) : (
              <>
                <Badge highContrast color={STATUS_COLOR[d.status] ?? 'amber'}>
                  {d.status}
                </Badge>
                <Text size="1" color="gray">
                  {d.date}
                </Text>
              </>
            )}
          </Flex>
        </li>
      );
    })}
  </ol>
);

/**
 * A channel's decisions (GET /api/graph/decisions): name, who decided and when, what superseded it, status; above them
 * every supersession chain (following superseded_by), or a note that none of them was superseded.
 */
const Decisions = ({
  channel,
  asOf,
  channelName,
  centreSearch,
}: {
  channel: string | undefined;
  asOf: AsOf | null;
  channelName: (id: string) => string;
  centreSearch: (name: string) => string;
}) => {
  const decisions = useQuery({
    queryKey: ['graph-decisions', channel, asOf?.instant ?? 'now'],
    enabled: !!channel,
    queryFn: () =>
      unwrap(api.GET('/api/graph/decisions', { params: { query: { channel_id: channel!, ...asOfQuery(asOf) } } })),
  });
  let body: ReactNode;
  if (!channel)
    body = (
      <Text size="2" color="gray">
        Choose a channel, or an entity, to see the decisions of its channel.
      </Text>
    );
  else if (decisions.isPending) body = <Loading label="Loading decisions" />;
  else if (decisions.error) body = <ErrorState error={decisions.error} retry={() => void decisions.refetch()} />;
  else if (decisions.data.length === 0)
    body = (
      <Empty
        title={`No decisions recorded in #${channelName(channel)}${asOf ? ` as of ${describeAsOf(asOf)}` : ''}.`}
      />
    );
  else {
    const chains = chainsOf(decisions.data);
    body = (
      <Flex direction="column" gap="3">
        {chains.length ? (
          <Box>
            <Heading as="h3" size="2" mb="1">
              Supersession chains ({chains.length})
            </Heading>
            <Flex direction="column" gap="3">
              {chains.map((c) => (
                <Card key={typeof c[0] === 'string' ? c[0] : c[0]!.name} size="1">
                  <Chain chain={c} centreSearch={centreSearch} />
                </Card>
              ))}
            </Flex>
          </Box>
        ) : (
          <Text size="2" color="gray" data-testid="no-supersession">
            No decision in #{channelName(channel)} has been superseded: each one stands alone.
          </Text>
        )}
        <Table.Root size="1" variant="surface" aria-label="Decisions" data-testid="decision-list">
          <Table.Header>
            <Table.Row>
              <Table.ColumnHeaderCell>Decision</Table.ColumnHeaderCell>
              <Table.ColumnHeaderCell>Status</Table.ColumnHeaderCell>
            </Table.Row>
          </Table.Header>
          <Table.Body>
            {decisions.data.map((d) => (
              <Table.Row key={d.name} data-testid="decision-row" data-name={d.name}>
                <Table.RowHeaderCell>
                  <RLink asChild size="2">
                    <Link to={centreSearch(d.name)}>{d.name}</Link>
                  </RLink>
                  <Text as="div" size="1" color="gray">
                    {d.decided_by ? `by ${d.decided_by} · ` : ''}
                    {d.date}
                  </Text>
                  {d.superseded_by ? (
                    <Text as="div" size="1" color="gray">
                      superseded by {d.superseded_by}
                    </Text>
                  ) : null}
                </Table.RowHeaderCell>
                <Table.Cell>
                  <Badge highContrast color={STATUS_COLOR[d.status] ?? 'amber'} data-testid="decision-status">
                    {d.status}
                  </Badge>
                </Table.Cell>
              </Table.Row>
            ))}
          </Table.Body>
        </Table.Root>
      </Flex>
    );
  }
  return (
    <section aria-labelledby="graph-decisions-h" style={{ minWidth: 0 }}>
      <Heading as="h2" size="4" mb="2" id="graph-decisions-h">
        Decisions{channel ? ` in #${channelName(channel)}` : ''}
        {asOf ? ` as of ${describeAsOf(asOf)}` : ''}
      </Heading>
      {body}
    </section>
  );
};

/** The Graph explorer page (`/graph`): the explorer across every channel, with a channel choice in the URL. */
export const GraphPage = () => (
  <Flex direction="column" gap="4">
    <Heading as="h1" size="6">
      Graph explorer
    </Heading>
    <GraphExplorer />
  </Flex>
);
