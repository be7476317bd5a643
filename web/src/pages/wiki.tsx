import { ChevronDownIcon, DownloadIcon, ExternalLinkIcon, ReloadIcon, UpdateIcon } from '@radix-ui/react-icons';
import {
  Badge,
  Box,
  Button,
  Callout,
  Card,
  Flex,
  Heading,
  Link as RLink,
  Select,
  Spinner,
  Table,
  Tabs,
  Text,
  VisuallyHidden,
} from '@radix-ui/themes';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useEffect, useMemo, useRef, useState } from 'react';
import type { Components } from 'react-markdown';
import { Link, useParams, useSearchParams } from 'react-router';
import { ApiError, api, type Schemas, unwrap } from '../api/client';
import { formatCount, formatTime, useChannels, useIsAdmin, useIsMember, useMediaQuery } from '../api/hooks';
import { type AsOf, AsOfControl, describeAsOf, parseAsOf } from '../components/as-of';
import { type CitationLike, safeHref } from '../components/citation';
import { FreshnessMark, freshnessIn } from '../components/freshness';
import { Markdown } from '../components/markdown';
import { Empty, ErrorState, Loading, QueryView } from '../components/states';

type WikiNode = Schemas['WikiNode'];
type WikiCitation = CitationLike;

/**
 * The UI's address of a page of a channel's wiki (the channel workspace's wiki tab); with `asOf` the page as of then
 * (`?as_of=`, a day or an instant: AsOf).
 */
export const wikiPageUrl = (channelId: string, pageId: string, asOf?: AsOf | null): string =>
  `/channels/${encodeURIComponent(channelId)}/wiki/${encodeURIComponent(pageId)}${
    asOf ? `?as_of=${encodeURIComponent(asOf.param)}` : ''
  }`;

/** Every node of a structure, depth first. */
const flatten = (nodes: readonly WikiNode[]): WikiNode[] => nodes.flatMap((n) => [n, ...flatten(n.children)]);

/** A stored link target (`topic/foo`, `./topic/foo/`, percent-encoded or not) as a page reference. */
const pageRef = (href: string): string => {
  const ref = href
    .split(/[?#]/)[0]!
    .replace(/^\.?\//, '')
    .replace(/\/+$/, '');
  try {
    return decodeURIComponent(ref);
  } catch {
    return ref;
  }
};

/** A heading of a page's Markdown: its source line (1-based), level, text as read, and the id it gets. */
interface PageHeading {
  line: number;
  level: number;
  text: string;
  id: string;
}

/** Markdown inline markup removed for a table of contents (`**x**`, `_x_`, `` `x` ``, links, `[n]` markers). */
const plainText = (md: string): string =>
  md
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\s*\[\d{1,3}\]/g, '')
    .replace(/[*_`~]+/g, '')
    .trim();

/**
 * The headings of a page's Markdown (ATX `#` headings outside fenced code) with unique ids (`h-` + a slug). The first
 * line's `# Title` is the page's own title (shown as the screen's heading), not part of the contents.
 */
export const headingsOf = (content: string): PageHeading[] => {
  const out: PageHeading[] = [];
  const used = new Map<string, number>();
  let fence: string | null = null;
  content.split('\n').forEach((raw, i) => {
    const line = raw.trimEnd();
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (fence === null) fence = f[1]![0]!;
      else if (f[1]![0] === fence) fence = null;
      return;
    }
    if (fence !== null) return;
    const m = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (!m) return;
    const text = plainText(m[2]!);
    const base = `h-${
      text
        .toLowerCase()
        .normalize('NFKD')
        .replace(/[^\p{L}\p{N}]+/gu, '-')
        .replace(/^-+|-+$/g, '') || 'section'
    }`;
    const n = (used.get(base) ?? 0) + 1;
    used.set(base, n);
    out.push({ line: i + 1, level: m[1]!.length, text, id: n === 1 ? base : `${base}-${n}` });
  });
  return out;
};

/** A file name from a page title (characters file systems refuse replaced). */
const fileName = (title: string): string =>
  `${
    title
      .replace(/[\\/:*?"<>|]+/g, '-')
      .replace(/\s+/g, ' ')
      .trim() || 'page'
  }.md`;

/** Saves `text` as a Markdown file named `name` (a Blob, no round trip). */
const saveMarkdown = (text: string, name: string) => {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/markdown;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
};

/** The query keys of one channel's wiki (invalidated together when a generation ends); `asOf` an instant or null (now). */
const keys = {
  all: (channelId: string) => ['wiki', channelId] as const,
  structure: (channelId: string, asOf: string | null) => ['wiki', channelId, 'structure', asOf ?? 'now'] as const,
  status: (channelId: string) => ['wiki', channelId, 'status'] as const,
  page: (channelId: string, pageId: string, asOf: string | null) =>
    ['wiki', channelId, 'page', pageId, asOf ?? 'now'] as const,
  versions: (channelId: string) => ['wiki', channelId, 'versions'] as const,
  diff: (channelId: string, pageId: string, from: number, to: number) =>
    ['wiki', channelId, 'diff', pageId, from, to] as const,
};

/** `{as_of}` for a query of the wiki as of then, nothing for now. */
const asOfQuery = (asOf: AsOf | null) => (asOf ? { as_of: asOf.instant } : {});

/**
 * The wiki's "As of" in the address (`?as_of=`, a day read as its end in UTC or an instant; issue 27 point 2), so a
 * view of an older version can be shared: the AsOf (null: now) and how to change it (the page, its tab and the rest of
 * the address stay; a chosen pair of versions to compare is dropped, its default follows the as-of version).
 */
const useAsOf = () => {
  const [params, setParams] = useSearchParams();
  const value = parseAsOf(params.get('as_of'));
  const set = (next: string | null) =>
    setParams((prev) => {
      const p = new URLSearchParams(prev);
      if (next) p.set('as_of', next);
      else p.delete('as_of');
      p.delete('from');
      p.delete('to');
      return p;
    });
  return { value, set };
};

/** The wiki's versions, newest first (GET /api/wiki/versions, at most 50). */
const useVersions = (channelId: string) =>
  useQuery({
    queryKey: keys.versions(channelId),
    queryFn: () => unwrap(api.GET('/api/wiki/versions', { params: { query: { channel_id: channelId, limit: 50 } } })),
  });

/** The version current at `asOf`: the newest generated by then, from a newest-first list. */
const versionAt = <V extends { generated_at: string }>(list: readonly V[], asOf: AsOf): V | undefined =>
  list.find((v) => Date.parse(v.generated_at) <= Date.parse(asOf.instant));

/**
 * The route `/channels/:channelId/wiki/:pageId?` on its own (until the channel workspace shows WikiView in its wiki
 * tab): the channel's name as the screen's heading, then WikiView.
 */
export const WikiRoute = () => {
  const { channelId, pageId } = useParams();
  const channels = useChannels();
  const name = channels.data?.find((c) => c.id === channelId)?.name;
  return (
    <Flex direction="column" gap="4">
      <Heading as="h1" size="7">
        {name ? `#${name}` : 'Channel'} wiki
      </Heading>
      <WikiView channelId={channelId!} {...(pageId ? { pageId } : {})} />
    </Flex>
  );
};

/**
 * The wiki of one channel (spec "Wiki"; issue 26 point 3): the page tree with section numbers (GET
 * /api/wiki/structure), the page (GET /api/wiki/pages/{page_id}) rendered safely with `[n]` citation hover cards and
 * working links between pages (stored slugs such as `topic/foo` mapped to page ids through the structure; unknown
 * links stay plain text), the page's sources, a table of contents of its headings, the stale badge and the live
 * generation status (GET /api/wiki/status, polled every 2 s while a job is queued or running; the tree and page are
 * read again when a new version lands), the page's changes: the versions and the page's diff between two of them (GET
 * /api/wiki/versions, GET /api/wiki/pages/{page_id}/diff), an "As of" day (issue 27 point 2: the tree and page as of
 * the end of that day, UTC, with `as_of`; a notice names the version shown and leads back to now; before the first
 * version, a message saying so), update (POST /api/wiki/refresh, members), regenerate (POST /api/admin/wiki/rebuild,
 * admins only) and download as Markdown. Reads never generate: a channel without a wiki says so and offers to generate
 * it. At 760 px and below the tree folds into a disclosure above the page, and below 1100 px the table of contents
 * sits above the page's text. Links go to `/channels/{channelId}/wiki/{pageId}`; the view and the as-of time
 * (`?view=changes&from=&to=&as_of=`) live in the URL.
 */
export const WikiView = ({ channelId, pageId }: { channelId: string; pageId?: string }) => {
  const wide = useMediaQuery('(min-width: 761px)');
  const tocAside = useMediaQuery('(min-width: 1101px)');
  const { value: asOf, set: setAsOf } = useAsOf();
  const structure = useQuery({
    queryKey: keys.structure(channelId, asOf?.instant ?? null),
    queryFn: () =>
      unwrap(api.GET('/api/wiki/structure', { params: { query: { channel_id: channelId, ...asOfQuery(asOf) } } })),
    retry: (n, e) => !(e instanceof ApiError && e.status === 404) && n < 2,
  });
  const nodes = useMemo(() => flatten(structure.data?.pages ?? []), [structure.data]);
  const current = pageId ?? 'overview';
  const node = nodes.find((n) => n.id === current);
  const notFound = structure.error instanceof ApiError && structure.error.status === 404;

  if (notFound && asOf)
    return (
      <Flex direction="column" gap="3">
        <WikiStatusBar channelId={channelId} />
        <AsOfControl value={asOf} onChange={setAsOf} clearable={false} />
        <NoVersionThen error={structure.error as ApiError} asOf={asOf} onChange={setAsOf} />
      </Flex>
    );
  if (notFound && (structure.error as ApiError).code === 'NOT_FOUND')
    return (
      <Flex direction="column" gap="3">
        <WikiStatusBar channelId={channelId} />
        <Empty title="This channel has no wiki yet.">
          {((structure.error as ApiError).details as { channel_id?: string } | null)?.channel_id
            ? 'It is generated once the channel has facts, after each sync or import; members can generate it now.'
            : (structure.error as ApiError).message}
        </Empty>
      </Flex>
    );

  const tree = structure.data ? (
    <PageTree channelId={channelId} nodes={structure.data.pages} current={current} asOf={asOf} />
  ) : null;
  return (
    <Flex direction="column" gap="4">
      <WikiStatusBar channelId={channelId} />
      <WikiAsOf channelId={channelId} asOf={asOf} onChange={setAsOf} />
      <QueryView query={structure} label="Loading the wiki">
        {() =>
          wide ? (
            <div className="wiki-layout">
              <Box asChild style={{ position: 'sticky', top: 16, maxHeight: 'calc(100vh - 32px)', overflowY: 'auto' }}>
                <nav aria-label="Wiki pages" className="tree">
                  {tree}
                </nav>
              </Box>
              <WikiPageView channelId={channelId} pageId={current} nodes={nodes} tocInline={!tocAside} asOf={asOf} />
              {tocAside ? <TocAside channelId={channelId} pageId={current} asOf={asOf} /> : null}
            </div>
          ) : (
            <Flex direction="column" gap="3">
              <Card size="1" asChild>
                <details key={current}>
                  <summary style={{ cursor: 'pointer', listStyle: 'none' }}>
                    <ChevronDownIcon aria-hidden style={{ verticalAlign: 'middle', marginRight: 6 }} />
                    <Text weight="medium">Pages</Text>
                    {node ? (
                      <Text color="gray">
                        {' '}
                        · {node.section_number} {node.title}
                      </Text>
                    ) : null}
                  </summary>
                  <nav aria-label="Wiki pages" className="tree" style={{ marginTop: 8 }}>
                    {tree}
                  </nav>
                </details>
              </Card>
              <WikiPageView channelId={channelId} pageId={current} nodes={nodes} tocInline asOf={asOf} />
            </Flex>
          )
        }
      </QueryView>
    </Flex>
  );
};

/** The tree of pages: each a link with its section number (keeping the "As of"), the current one marked. */
const PageTree = ({
  channelId,
  nodes,
  current,
  asOf,
}: {
  channelId: string;
  nodes: readonly WikiNode[];
  current: string;
  asOf: AsOf | null;
}) => (
  <ul>
    {nodes.map((n) => (
      <li key={n.id}>
        <Link to={wikiPageUrl(channelId, n.id, asOf)} aria-current={n.id === current ? 'page' : undefined}>
          <Text color="gray" className="tree-num">
            {n.section_number}
          </Text>{' '}
          {n.title}
        </Link>
        {n.children.length > 0 ? (
          <PageTree channelId={channelId} nodes={n.children} current={current} asOf={asOf} />
        ) : null}
      </li>
    ))}
  </ul>
);

/** The page query of the wiki (shared by the page and the table of contents beside it); as of then, or now. */
const usePage = (channelId: string, pageId: string, asOf: AsOf | null) =>
  useQuery({
    queryKey: keys.page(channelId, pageId, asOf?.instant ?? null),
    queryFn: () =>
      unwrap(
        api.GET('/api/wiki/pages/{page_id}', {
          params: { path: { page_id: pageId }, query: { channel_id: channelId, ...asOfQuery(asOf) } },
        }),
      ),
    retry: (n, e) => !(e instanceof ApiError && e.status === 404) && n < 2,
  });

/** The table of contents: links to the page's headings (level 2 and 3). */
const Toc = ({ content }: { content: string }) => {
  const headings = headingsOf(content).filter((h) => h.level === 2 || h.level === 3);
  if (headings.length === 0) return <Text color="gray">This page has no sections.</Text>;
  return (
    <ul style={{ listStyle: 'none', margin: 0, padding: 0 }}>
      {headings.map((h) => (
        <li key={h.id} style={{ paddingLeft: h.level === 3 ? 12 : 0, marginBottom: 4 }}>
          <RLink
            href={`#${h.id}`}
            size="2"
            onClick={(e) => {
              const el = document.getElementById(h.id);
              if (!el) return;
              e.preventDefault();
              el.scrollIntoView({ block: 'start' });
              el.focus({ preventScroll: true });
              window.history.replaceState(window.history.state, '', `#${h.id}`);
            }}
          >
            {h.text}
          </RLink>
        </li>
      ))}
    </ul>
  );
};

/** The table of contents beside the page (wide screens). */
const TocAside = ({ channelId, pageId, asOf }: { channelId: string; pageId: string; asOf: AsOf | null }) => {
  const page = usePage(channelId, pageId, asOf);
  return (
    <Box asChild style={{ position: 'sticky', top: 16 }}>
      <nav aria-label="On this page" className="wiki-toc">
        <Heading as="h2" size="2" mb="2">
          On this page
        </Heading>
        {page.data ? <Toc content={page.data.content} /> : null}
      </nav>
    </Box>
  );
};

/**
 * One page (as of `asOf`, or now): its section number and title, counts and date, download, then two tabs (in
 * the URL as `?view=`): the page (Markdown with citations, links and heading ids; its sources) and its changes (the
 * versions, and the page's diff between two of them). `?view=versions`, the tab's former name, opens the changes.
 */
const WikiPageView = ({
  channelId,
  pageId,
  nodes,
  tocInline,
  asOf,
}: {
  channelId: string;
  pageId: string;
  nodes: readonly WikiNode[];
  tocInline: boolean;
  asOf: AsOf | null;
}) => {
  const page = usePage(channelId, pageId, asOf);
  const [params, setParams] = useSearchParams();
  const view = params.get('view') === 'changes' || params.get('view') === 'versions' ? 'changes' : 'page';
  const targets = useMemo(() => {
    const m = new Map<string, string>();
    for (const n of nodes) {
      m.set(n.slug, n.id);
      m.set(n.id, n.id);
    }
    return m;
  }, [nodes]);
  const resolveLink = (href: string): string | null => {
    const id = targets.get(pageRef(href));
    return id ? wikiPageUrl(channelId, id, asOf) : null;
  };

  if (page.error instanceof ApiError && page.error.status === 404)
    return (
      <Box asChild style={{ minWidth: 0 }}>
        <main aria-label="Wiki page">
          <Empty
            title={asOf ? `The wiki as of ${describeAsOf(asOf)} had no such page.` : 'This wiki has no such page.'}
          >
            <Link to={wikiPageUrl(channelId, 'overview', asOf)}>Open the overview</Link>.
          </Empty>
        </main>
      </Box>
    );

  return (
    <Box asChild style={{ minWidth: 0 }}>
      <article aria-label="Wiki page">
        <QueryView query={page} label="Loading the page">
          {(p) => {
            const headings = headingsOf(p.content);
            const idByLine = new Map(headings.map((h) => [h.line, h.id]));
            const heading =
              (Tag: 'h3' | 'h4' | 'h5'): Components['h2'] =>
              ({ node, children }) => {
                const id = idByLine.get(node?.position?.start.line ?? -1);
                return (
                  <Tag id={id} tabIndex={-1} style={{ scrollMarginTop: 16 }}>
                    {children}
                  </Tag>
                );
              };
            const components: Components = {
              // The first line's `# Title` is shown as the page's heading above; other level-1 headings sit below it.
              h1: ({ node, children }) =>
                node?.position?.start.line === 1 ? null : (
                  <h3 id={idByLine.get(node?.position?.start.line ?? -1)} tabIndex={-1}>
                    {children}
                  </h3>
                ),
              h2: heading('h3'),
              h3: heading('h4'),
              h4: heading('h5'),
            };
            return (
              <Flex direction="column" gap="3">
                <Flex justify="between" align="start" gap="3" wrap="wrap">
                  <Box>
                    <Heading as="h2" size="6" data-testid="wiki-page-title">
                      <Text color="gray">{p.section_number}</Text> {p.title}
                    </Heading>
                    <Text size="2" color="gray" data-testid="wiki-page-meta">
                      {formatCount(p.memory_count)} memories · {p.citations.length} sources · updated{' '}
                      {formatTime(p.last_updated)}
                    </Text>
                    <Box>
                      <FreshnessMark freshness={freshnessIn(p)} />
                    </Box>
                  </Box>
                  <Button variant="soft" onClick={() => saveMarkdown(p.content, fileName(p.title))}>
                    <DownloadIcon /> Download as Markdown
                  </Button>
                </Flex>
                <Tabs.Root
                  value={view}
                  onValueChange={(v) =>
                    setParams(
                      (prev) => {
                        const next = new URLSearchParams(prev);
                        if (v === 'changes') next.set('view', 'changes');
                        else {
                          next.delete('view');
                          next.delete('from');
                          next.delete('to');
                        }
                        return next;
                      },
                      { replace: true },
                    )
                  }
                >
                  <Tabs.List aria-label="Page or changes">
                    <Tabs.Trigger value="page">Page</Tabs.Trigger>
                    <Tabs.Trigger value="changes">Changes</Tabs.Trigger>
                  </Tabs.List>
                  <Tabs.Content value="page">
                    <Flex direction="column" gap="3" pt="3">
                      {tocInline && headings.some((h) => h.level === 2 || h.level === 3) ? (
                        <Card size="1" asChild>
                          <details>
                            <summary style={{ cursor: 'pointer', listStyle: 'none' }}>
                              <ChevronDownIcon aria-hidden style={{ verticalAlign: 'middle', marginRight: 6 }} />
                              <Text weight="medium">On this page</Text>
                            </summary>
                            <Box asChild mt="2">
                              <nav aria-label="On this page">
                                <Toc content={p.content} />
                              </nav>
                            </Box>
                          </details>
                        </Card>
                      ) : null}
                      <div data-testid="wiki-content">
                        <Markdown
                          content={p.content}
                          citations={p.citations}
                          resolveLink={resolveLink}
                          components={components}
                        />
                      </div>
                      <Sources citations={p.citations} />
                    </Flex>
                  </Tabs.Content>
                  <Tabs.Content value="changes">
                    <Box pt="3">
                      <ChangesView channelId={channelId} pageId={pageId} title={p.title} asOf={asOf} />
                    </Box>
                  </Tabs.Content>
                </Tabs.Root>
              </Flex>
            );
          }}
        </QueryView>
      </article>
    </Box>
  );
};

/** The page's sources: each citation's marker, author, channel, time, excerpt and a link to the message. */
const Sources = ({ citations }: { citations: readonly WikiCitation[] }) =>
  citations.length === 0 ? null : (
    <Box>
      <Heading as="h3" size="3" mb="2">
        Sources ({citations.length})
      </Heading>
      <ol style={{ listStyle: 'none', margin: 0, padding: 0 }} data-testid="wiki-sources">
        {citations.map((c) => (
          <li key={c.id} style={{ marginBottom: 8 }}>
            <Text size="2">
              <Text weight="bold">{c.id}</Text> {c.author} <Text color="gray">in #{c.channel.replace(/^#/, '')}</Text>,{' '}
              <Text color="gray">{formatTime(c.timestamp)}</Text>: {c.text_excerpt}{' '}
              {safeHref(c.permalink) ? (
                <RLink href={safeHref(c.permalink)} target="_blank" rel="noopener noreferrer">
                  Open the message {c.id} <ExternalLinkIcon />
                </RLink>
              ) : null}
            </Text>
          </li>
        ))}
      </ol>
    </Box>
  );

/**
 * The wiki's state and controls: version and generation time, the stale badge, the live generation status (polled
 * every 2 s while a job is queued or running), the next scheduled rebuild; update (members: POST /api/wiki/refresh,
 * incremental once a wiki exists) and regenerate (admins: POST /api/admin/wiki/rebuild, a full rebuild). When a new
 * version lands, the wiki's queries are read again.
 */
const WikiStatusBar = ({ channelId }: { channelId: string }) => {
  const queryClient = useQueryClient();
  const isMember = useIsMember();
  const isAdmin = useIsAdmin();
  const [notice, setNotice] = useState<string | null>(null);
  const status = useQuery({
    queryKey: keys.status(channelId),
    queryFn: () => unwrap(api.GET('/api/wiki/status', { params: { query: { channel_id: channelId } } })),
    refetchInterval: (q) => (q.state.data?.is_generating || q.state.data?.job_id ? 2_000 : false),
  });
  const s = status.data;
  const stamp = s ? `${s.current_version ?? 0}|${s.last_generated_at ?? ''}` : null;
  const busy = s ? Boolean(s.is_generating || s.job_id) : false;
  const seen = useRef<{ stamp: string; busy: boolean } | null>(null);
  useEffect(() => {
    if (stamp === null) return;
    const before = seen.current;
    seen.current = { stamp, busy };
    if (!before) return;
    if (before.stamp !== stamp) {
      setNotice(
        `Version ${s?.current_version} generated ${formatTime(s?.last_generated_at)}; the pages are up to date.`,
      );
      void queryClient.invalidateQueries({
        predicate: (q) => q.queryKey[0] === 'wiki' && q.queryKey[1] === channelId && q.queryKey[2] !== 'status',
      });
    } else if (before.busy && !busy) setNotice('The generation finished without a new version (nothing changed).');
  }, [stamp, busy, s, channelId, queryClient]);

  const start = useMutation({
    mutationFn: (kind: 'update' | 'regenerate') =>
      kind === 'regenerate'
        ? unwrap(api.POST('/api/admin/wiki/rebuild', { body: { channel_id: channelId } }))
        : unwrap(api.POST('/api/wiki/refresh', { body: { channel_id: channelId } })),
    onMutate: () => setNotice(null),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: keys.status(channelId) }),
  });

  if (status.isPending) return <Loading label="Loading the wiki's status" lines={1} />;
  if (status.error) return <ErrorState error={status.error} retry={() => void status.refetch()} />;
  const generated = s!.current_version != null;
  return (
    <Flex direction="column" gap="2">
      <Flex gap="3" align="center" justify="between" wrap="wrap" data-testid="wiki-status">
        <Flex gap="3" align="center" wrap="wrap" style={{ flex: '1 1 320px' }}>
          {generated ? (
            <Text size="2">
              Version {s!.current_version} · generated {formatTime(s!.last_generated_at)} · {formatCount(s!.page_count)}{' '}
              pages
            </Text>
          ) : (
            <Text size="2" color="gray">
              Not generated yet
            </Text>
          )}
          {s!.is_stale ? (
            <Badge color="amber" highContrast title="New facts arrived since the last generation">
              Stale
            </Badge>
          ) : generated ? (
            <Badge color="green" highContrast>
              Up to date
            </Badge>
          ) : null}
          {busy ? (
            <Badge color="blue" highContrast>
              <Spinner size="1" /> {s!.is_generating ? 'Generating…' : 'Queued…'}
            </Badge>
          ) : null}
          {s!.next_generation_scheduled ? (
            <Text size="2" color="gray">
              Next rebuild {formatTime(s!.next_generation_scheduled)}
            </Text>
          ) : null}
        </Flex>
        <Flex gap="2" wrap="wrap">
          {isMember ? (
            <Button
              variant="soft"
              disabled={busy || start.isPending}
              onClick={() => start.mutate('update')}
              title="Generate the pages whose facts changed"
            >
              <UpdateIcon /> {generated ? 'Update' : 'Generate the wiki'}
            </Button>
          ) : null}
          {isAdmin && generated ? (
            <Button
              variant="soft"
              color="orange"
              highContrast
              disabled={busy || start.isPending}
              onClick={() => start.mutate('regenerate')}
              title="Rebuild every page (admin)"
            >
              <ReloadIcon /> Regenerate
            </Button>
          ) : null}
        </Flex>
      </Flex>
      <div role="status" aria-live="polite">
        {notice ? (
          <Callout.Root size="1" color="green" highContrast>
            <Callout.Text>{notice}</Callout.Text>
          </Callout.Root>
        ) : null}
      </div>
      {start.error ? <ErrorState error={start.error} /> : null}
    </Flex>
  );
};

/**
 * The wiki's "As of" control (issue 27 point 2): a day (its end, UTC) whose version the tree and the page show, kept
 * in the address as `?as_of=` (which may also name an instant, AsOf). While one is chosen, a notice says which version is shown (number and generation time,
 * from GET /api/wiki/versions) and offers the way back to now.
 */
const WikiAsOf = ({
  channelId,
  asOf,
  onChange,
}: {
  channelId: string;
  asOf: AsOf | null;
  onChange: (day: string | null) => void;
}) => {
  const versions = useVersions(channelId);
  const list = versions.data?.versions ?? [];
  const shown = asOf ? versionAt(list, asOf) : undefined;
  const current = list[0];
  return (
    <Flex direction="column" gap="2">
      <AsOfControl value={asOf} onChange={onChange} clearable={false} />
      {asOf ? (
        <Callout.Root size="1" color="amber" highContrast role="status" data-testid="wiki-as-of">
          <Callout.Text>
            <Text weight="bold">Showing the wiki as of {describeAsOf(asOf)}</Text>
            {shown
              ? shown.version_number === current?.version_number
                ? `: version ${shown.version_number}, generated ${formatTime(shown.generated_at)}, which is still the current version.`
                : `: version ${shown.version_number}, generated ${formatTime(shown.generated_at)}, an older version (the current one is version ${current?.version_number}).`
              : '.'}
          </Callout.Text>
          <Flex>
            <Button size="1" variant="soft" highContrast onClick={() => onChange(null)}>
              Back to the current wiki
            </Button>
          </Flex>
        </Callout.Root>
      ) : null}
    </Flex>
  );
};

/**
 * The 404 of the wiki as of a time no version had been generated by (details: `first_generated_at`, the first version's
 * generation time, or null when there is none): says so in words and offers the first version, or now.
 */
const NoVersionThen = ({
  error,
  asOf,
  onChange,
}: {
  error: ApiError;
  asOf: AsOf;
  onChange: (asOf: string | null) => void;
}) => {
  const first = (error.details as { first_generated_at?: string | null } | null)?.first_generated_at ?? null;
  return (
    <Callout.Root color="gray" variant="surface" data-testid="wiki-as-of-none">
      <Callout.Text>
        <Text weight="bold">No version of this wiki had been generated by {describeAsOf(asOf)}.</Text>{' '}
        {first
          ? `Its first version was generated ${formatTime(first)}.`
          : 'No version has been generated for this channel yet.'}
      </Callout.Text>
      <Flex gap="2" wrap="wrap">
        {first ? (
          <Button size="1" variant="soft" highContrast onClick={() => onChange(first)}>
            Show the first version
          </Button>
        ) : null}
        <Button size="1" variant="soft" highContrast onClick={() => onChange(null)}>
          Back to now
        </Button>
      </Flex>
    </Callout.Root>
  );
};

/**
 * The page's changes: the wiki's versions (generated at, pages, model) and the diff of this page between two of them
 * (`?from=&to=` in the address; by default the version shown, the current one or the one as of `asOf`, against the
 * version before it), as GET /api/wiki/pages/{page_id}/diff answers it.
 */
const ChangesView = ({
  channelId,
  pageId,
  title,
  asOf,
}: {
  channelId: string;
  pageId: string;
  title: string;
  asOf: AsOf | null;
}) => {
  const [params, setParams] = useSearchParams();
  const versions = useVersions(channelId);
  const list = versions.data?.versions ?? [];
  const pick = (name: 'from' | 'to', fallback: number | undefined): number | null => {
    const v = Number(params.get(name));
    return list.some((x) => x.version_number === v) ? v : (fallback ?? null);
  };
  const shown = asOf ? versionAt(list, asOf) : list[0];
  const to = pick('to', shown?.version_number);
  const from = pick('from', list.find((v) => to !== null && v.version_number < to)?.version_number);
  const set = (name: 'from' | 'to', v: string) =>
    setParams(
      (prev) => {
        const next = new URLSearchParams(prev);
        next.set(name, v);
        return next;
      },
      { replace: true },
    );
  return (
    <QueryView query={versions} label="Loading the versions">
      {() => (
        <Flex direction="column" gap="4">
          {list.length < 2 ? (
            <Empty title="Only one version so far.">
              Changes need two: a new version is saved after each generation (update or regenerate).
            </Empty>
          ) : (
            <>
              <Flex gap="3" align="center" wrap="wrap">
                <Text size="2" weight="medium">
                  Compare this page
                </Text>
                <VersionSelect label="From version" value={from} list={list} onChange={(v) => set('from', v)} />
                <VersionSelect label="To version" value={to} list={list} onChange={(v) => set('to', v)} />
              </Flex>
              {from === null ? (
                <Empty title={`Version ${to} is the first version.`}>Choose an earlier and a later version.</Empty>
              ) : (
                <PageDiff channelId={channelId} pageId={pageId} title={title} from={from} to={to!} />
              )}
            </>
          )}
          <Table.Root size="1" variant="surface" style={{ display: 'block', overflowX: 'auto' }}>
            <Table.Header>
              <Table.Row>
                <Table.ColumnHeaderCell>Version</Table.ColumnHeaderCell>
                <Table.ColumnHeaderCell>Generated</Table.ColumnHeaderCell>
                <Table.ColumnHeaderCell>Pages</Table.ColumnHeaderCell>
                <Table.ColumnHeaderCell>Model</Table.ColumnHeaderCell>
              </Table.Row>
            </Table.Header>
            <Table.Body>
              {list.map((v, i) => (
                <Table.Row key={v.version_number}>
                  <Table.RowHeaderCell>
                    {v.version_number}
                    {i === 0 ? (
                      <Badge ml="2" color="green" highContrast>
                        current
                      </Badge>
                    ) : null}
                  </Table.RowHeaderCell>
                  <Table.Cell>{formatTime(v.generated_at)}</Table.Cell>
                  <Table.Cell>{formatCount(v.page_count)}</Table.Cell>
                  <Table.Cell>{v.model}</Table.Cell>
                </Table.Row>
              ))}
            </Table.Body>
          </Table.Root>
        </Flex>
      )}
    </QueryView>
  );
};

/** A labelled choice of one version. */
const VersionSelect = ({
  label,
  value,
  list,
  onChange,
}: {
  label: string;
  value: number | null;
  list: readonly { version_number: number; generated_at: string }[];
  onChange: (v: string) => void;
}) => (
  <Flex gap="2" align="center">
    <Text size="2" color="gray" id={`wiki-${label.replace(/\s/g, '-')}`}>
      {label}
    </Text>
    <Select.Root value={value === null ? undefined : String(value)} onValueChange={onChange}>
      <Select.Trigger aria-labelledby={`wiki-${label.replace(/\s/g, '-')}`} aria-label={label} />
      <Select.Content>
        {list.map((v) => (
          <Select.Item key={v.version_number} value={String(v.version_number)}>
            v{v.version_number} · {formatTime(v.generated_at)}
          </Select.Item>
        ))}
      </Select.Content>
    </Select.Root>
  </Flex>
);

/** One line of a unified diff as shown: added, removed, unchanged context, or a hunk's start. */
export interface DiffLine {
  kind: 'add' | 'del' | 'same' | 'hunk';
  text: string;
  /** For a hunk: the first line of the newer side it covers (1-based). */
  line?: number;
}

/**
 * The lines of a unified diff (GET /api/wiki/pages/{page_id}/diff's `diff`): the `---`/`+++` file header (its first
 * two lines) left out, `@@ -a,b +c,d @@` a hunk starting at newer line c, `+` added, `-` removed, ` ` context; a
 * `\ No newline` note is left out. Empty for an empty diff.
 */
export const diffLinesOf = (diff: string): DiffLine[] => {
  const raw = diff.split('\n');
  if (raw.at(-1) === '') raw.pop();
  const out: DiffLine[] = [];
  for (const l of raw.slice(2)) {
    if (l.startsWith('@@')) {
      const m = /^@@ -\d+(?:,\d+)? \+(\d+)/.exec(l);
      out.push({ kind: 'hunk', text: l, line: m ? Number(m[1]) : 1 });
    } else if (l.startsWith('+')) out.push({ kind: 'add', text: l.slice(1) });
    else if (l.startsWith('-')) out.push({ kind: 'del', text: l.slice(1) });
    else if (l.startsWith(' ')) out.push({ kind: 'same', text: l.slice(1) });
  }
  return out;
};

/**
 * The diff of one page between two versions as the API computes it (GET /api/wiki/pages/{page_id}/diff: the page's
 * title and Markdown, 3 lines of context): the counts of added and removed lines, then each line marked by colour and
 * by a visible `+`/`−` (and, for screen readers, "Added"/"Removed").
 */
const PageDiff = ({
  channelId,
  pageId,
  title,
  from,
  to,
}: {
  channelId: string;
  pageId: string;
  title: string;
  from: number;
  to: number;
}) => {
  const diff = useQuery({
    queryKey: keys.diff(channelId, pageId, from, to),
    queryFn: () =>
      unwrap(
        api.GET('/api/wiki/pages/{page_id}/diff', {
          params: { path: { page_id: pageId }, query: { channel_id: channelId, from: String(from), to: String(to) } },
        }),
      ),
    retry: (n, e) => !(e instanceof ApiError && e.status < 500) && n < 2,
    staleTime: Number.POSITIVE_INFINITY, // two saved versions never change
  });
  if (diff.isPending) return <Loading label="Loading the changes" />;
  if (diff.error instanceof ApiError && diff.error.status === 404)
    return <Empty title={`“${title}” is in neither version ${from} nor version ${to}.`} />;
  if (diff.error) return <ErrorState error={diff.error} retry={() => void diff.refetch()} />;
  const d = diff.data!;
  const s = (n: number) => (n === 1 ? '' : 's');
  const missing: ReactNode[] = [];
  if (!d.from.page_exists) missing.push(`“${title}” is not in version ${from}.`);
  if (!d.to.page_exists) missing.push(`“${title}” is not in version ${to}.`);
  const lines = diffLinesOf(d.diff);
  return (
    <Flex direction="column" gap="2" className="diff" data-testid="wiki-diff">
      <Flex gap="2" align="center" wrap="wrap">
        <Text size="2" data-testid="wiki-diff-summary">
          {d.changed
            ? `Version ${from} → ${to}: ${d.added_lines} line${s(d.added_lines)} added, ${d.removed_lines} line${s(d.removed_lines)} removed.`
            : `No changes to this page between version ${from} and version ${to}.`}{' '}
          {missing.join(' ')}
        </Text>
        {d.changed ? (
          <Flex gap="1" aria-hidden>
            <Badge color="green" highContrast data-testid="wiki-diff-added">
              +{d.added_lines}
            </Badge>
            <Badge color="red" highContrast data-testid="wiki-diff-removed">
              −{d.removed_lines}
            </Badge>
          </Flex>
        ) : null}
      </Flex>
      {lines.length > 0 ? (
        <Card size="1">
          <pre className="diff-lines" data-testid="wiki-diff-lines">
            {lines.map((l, i) =>
              l.kind === 'hunk' ? (
                // biome-ignore lint/suspicious/noArrayIndexKey: the lines of one diff, in order
                <span key={i} className="diff-hunk">
                  {i > 0 ? '⋯ ' : ''}from line {l.line}
                </span>
              ) : l.kind === 'add' ? (
                // biome-ignore lint/suspicious/noArrayIndexKey: the lines of one diff, in order
                <ins key={i} className="diff-add">
                  <span className="diff-marker" aria-hidden>
                    +
                  </span>
                  <VisuallyHidden>Added: </VisuallyHidden>
                  {l.text || ' '}
                </ins>
              ) : l.kind === 'del' ? (
                // biome-ignore lint/suspicious/noArrayIndexKey: the lines of one diff, in order
                <del key={i} className="diff-del">
                  <span className="diff-marker" aria-hidden>
                    −
                  </span>
                  <VisuallyHidden>Removed: </VisuallyHidden>
                  {l.text || ' '}
                </del>
              ) : (
                // biome-ignore lint/suspicious/noArrayIndexKey: the lines of one diff, in order
                <span key={i} className="diff-same">
                  <span className="diff-marker" aria-hidden>
                    {' '}
                  </span>
                  {l.text || ' '}
                </span>
              ),
            )}
          </pre>
        </Card>
      ) : null}
    </Flex>
  );
};
