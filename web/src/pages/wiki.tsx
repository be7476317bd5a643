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
import { diffLines } from 'diff';
import { type ReactNode, useEffect, useMemo, useRef, useState } from 'react';
import type { Components } from 'react-markdown';
import { Link, useParams, useSearchParams } from 'react-router';
import { ApiError, api, type Schemas, unwrap } from '../api/client';
import { formatCount, formatTime, useChannels, useIsAdmin, useIsMember, useMediaQuery } from '../api/hooks';
import { type CitationLike, safeHref } from '../components/citation';
import { FreshnessMark, freshnessIn } from '../components/freshness';
import { Markdown } from '../components/markdown';
import { Empty, ErrorState, Loading, QueryView } from '../components/states';

type WikiNode = Schemas['WikiNode'];
type WikiCitation = CitationLike;

/** The UI's address of a page of a channel's wiki (the channel workspace's wiki tab). */
export const wikiPageUrl = (channelId: string, pageId: string): string =>
  `/channels/${encodeURIComponent(channelId)}/wiki/${encodeURIComponent(pageId)}`;

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

/** The query keys of one channel's wiki (invalidated together when a generation ends). */
const keys = {
  all: (channelId: string) => ['wiki', channelId] as const,
  structure: (channelId: string) => ['wiki', channelId, 'structure'] as const,
  status: (channelId: string) => ['wiki', channelId, 'status'] as const,
  page: (channelId: string, pageId: string) => ['wiki', channelId, 'page', pageId] as const,
  versions: (channelId: string) => ['wiki', channelId, 'versions'] as const,
  version: (channelId: string, n: number) => ['wiki', channelId, 'version', n] as const,
};

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
 * read again when a new version lands), versions with a diff of the page between two of them (GET
 * /api/wiki/versions, /api/wiki/versions/{n}), update (POST /api/wiki/refresh, members), regenerate (POST
 * /api/admin/wiki/rebuild, admins only) and download as Markdown. Reads never generate: a channel without a wiki says
 * so and offers to generate it. At 760 px and below the tree folds into a disclosure above the page, and below 1100 px
 * the table of contents sits above the page's text. Links go to `/channels/{channelId}/wiki/{pageId}`; the view
 * (`?view=versions&from=&to=`) lives in the URL.
 */
export const WikiView = ({ channelId, pageId }: { channelId: string; pageId?: string }) => {
  const wide = useMediaQuery('(min-width: 761px)');
  const tocAside = useMediaQuery('(min-width: 1101px)');
  const structure = useQuery({
    queryKey: keys.structure(channelId),
    queryFn: () => unwrap(api.GET('/api/wiki/structure', { params: { query: { channel_id: channelId } } })),
    retry: (n, e) => !(e instanceof ApiError && e.status === 404) && n < 2,
  });
  const nodes = useMemo(() => flatten(structure.data?.pages ?? []), [structure.data]);
  const current = pageId ?? 'overview';
  const node = nodes.find((n) => n.id === current);

  if (structure.error instanceof ApiError && structure.error.status === 404 && structure.error.code === 'NOT_FOUND')
    return (
      <Flex direction="column" gap="3">
        <WikiStatusBar channelId={channelId} />
        <Empty title="This channel has no wiki yet.">
          {(structure.error.details as { channel_id?: string } | null)?.channel_id
            ? 'It is generated once the channel has facts, after each sync or import; members can generate it now.'
            : structure.error.message}
        </Empty>
      </Flex>
    );

  const tree = structure.data ? (
    <PageTree channelId={channelId} nodes={structure.data.pages} current={current} />
  ) : null;
  return (
    <Flex direction="column" gap="4">
      <WikiStatusBar channelId={channelId} />
      <QueryView query={structure} label="Loading the wiki">
        {() =>
          wide ? (
            <div className="wiki-layout">
              <Box asChild style={{ position: 'sticky', top: 16, maxHeight: 'calc(100vh - 32px)', overflowY: 'auto' }}>
                <nav aria-label="Wiki pages" className="tree">
                  {tree}
                </nav>
              </Box>
              <WikiPageView channelId={channelId} pageId={current} nodes={nodes} tocInline={!tocAside} />
              {tocAside ? <TocAside channelId={channelId} pageId={current} /> : null}
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
              <WikiPageView channelId={channelId} pageId={current} nodes={nodes} tocInline />
            </Flex>
          )
        }
      </QueryView>
    </Flex>
  );
};

/** The tree of pages: each a link with its section number, the current one marked (aria-current). */
const PageTree = ({
  channelId,
  nodes,
  current,
}: {
  channelId: string;
  nodes: readonly WikiNode[];
  current: string;
}) => (
  <ul>
    {nodes.map((n) => (
      <li key={n.id}>
        <Link to={wikiPageUrl(channelId, n.id)} aria-current={n.id === current ? 'page' : undefined}>
          <Text color="gray" className="tree-num">
            {n.section_number}
          </Text>{' '}
          {n.title}
        </Link>
        {n.children.length > 0 ? <PageTree channelId={channelId} nodes={n.children} current={current} /> : null}
      </li>
    ))}
  </ul>
);

/** The page query of the wiki (shared by the page and the table of contents beside it). */
const usePage = (channelId: string, pageId: string) =>
  useQuery({
    queryKey: keys.page(channelId, pageId),
    queryFn: () =>
      unwrap(
        api.GET('/api/wiki/pages/{page_id}', {
          params: { path: { page_id: pageId }, query: { channel_id: channelId } },
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
const TocAside = ({ channelId, pageId }: { channelId: string; pageId: string }) => {
  const page = usePage(channelId, pageId);
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
 * One page: its section number and title, counts and date, download, then two tabs (in the URL as `?view=`): the
 * page (Markdown with citations, links and heading ids; its sources) and its versions with a diff.
 */
const WikiPageView = ({
  channelId,
  pageId,
  nodes,
  tocInline,
}: {
  channelId: string;
  pageId: string;
  nodes: readonly WikiNode[];
  tocInline: boolean;
}) => {
  const page = usePage(channelId, pageId);
  const [params, setParams] = useSearchParams();
  const view = params.get('view') === 'versions' ? 'versions' : 'page';
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
    return id ? wikiPageUrl(channelId, id) : null;
  };

  if (page.error instanceof ApiError && page.error.status === 404)
    return (
      <Box asChild style={{ minWidth: 0 }}>
        <main aria-label="Wiki page">
          <Empty title="This wiki has no such page.">
            <Link to={wikiPageUrl(channelId, 'overview')}>Open the overview</Link>.
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
                    <Text size="2" color="gray">
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
                        if (v === 'versions') next.set('view', 'versions');
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
                  <Tabs.List aria-label="Page or versions">
                    <Tabs.Trigger value="page">Page</Tabs.Trigger>
                    <Tabs.Trigger value="versions">Versions</Tabs.Trigger>
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
                  <Tabs.Content value="versions">
                    <Box pt="3">
                      <VersionsView channelId={channelId} pageId={pageId} title={p.title} />
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

/** A version's snapshot (every page of that version). */
const useVersion = (channelId: string, n: number | null) =>
  useQuery({
    queryKey: keys.version(channelId, n ?? 0),
    queryFn: () =>
      unwrap(
        api.GET('/api/wiki/versions/{version_number}', {
          params: { path: { version_number: n! }, query: { channel_id: channelId } },
        }),
      ),
    enabled: n !== null,
    staleTime: Number.POSITIVE_INFINITY, // a saved version never changes
  });

/**
 * The versions of the wiki (generated at, pages, model) and the diff of this page between two of them (`?from=&to=`,
 * by default the previous and the current one): lines added and removed, marked by colour and by text.
 */
const VersionsView = ({ channelId, pageId, title }: { channelId: string; pageId: string; title: string }) => {
  const [params, setParams] = useSearchParams();
  const versions = useQuery({
    queryKey: keys.versions(channelId),
    queryFn: () => unwrap(api.GET('/api/wiki/versions', { params: { query: { channel_id: channelId, limit: 50 } } })),
  });
  const list = versions.data?.versions ?? [];
  const pick = (name: 'from' | 'to', fallback: number | undefined): number | null => {
    const v = Number(params.get(name));
    return list.some((x) => x.version_number === v) ? v : (fallback ?? null);
  };
  const to = pick('to', list[0]?.version_number);
  const from = pick('from', list[1]?.version_number);
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
          {list.length < 2 ? (
            <Empty title="Only one version so far.">
              A diff needs two: a new version is saved after each generation (update or regenerate).
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
              <PageDiff channelId={channelId} pageId={pageId} title={title} from={from} to={to} />
            </>
          )}
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

/** The diff of one page between two versions (diffLines): added and removed lines, with a text label each. */
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
  from: number | null;
  to: number | null;
}) => {
  const a = useVersion(channelId, from);
  const b = useVersion(channelId, to);
  if (from === null || to === null) return null;
  if (a.isPending || b.isPending) return <Loading label="Loading the versions to compare" />;
  if (a.error || b.error)
    return (
      <ErrorState
        error={a.error ?? b.error}
        retry={() => {
          void a.refetch();
          void b.refetch();
        }}
      />
    );
  const before = a.data!.pages.find((p) => p.id === pageId);
  const after = b.data!.pages.find((p) => p.id === pageId);
  const parts = diffLines(before?.content ?? '', after?.content ?? '');
  const lines = (s: string) => s.split('\n').length - (s.endsWith('\n') ? 1 : 0);
  const added = parts.filter((p) => p.added).reduce((n, p) => n + lines(p.value), 0);
  const removed = parts.filter((p) => p.removed).reduce((n, p) => n + lines(p.value), 0);
  const missing: ReactNode[] = [];
  if (!before) missing.push(`“${title}” is not in version ${from}.`);
  if (!after) missing.push(`“${title}” is not in version ${to}.`);
  return (
    <Flex direction="column" gap="2" className="diff" data-testid="wiki-diff">
      <Text size="2" data-testid="wiki-diff-summary">
        {added === 0 && removed === 0
          ? `No changes to this page between version ${from} and version ${to}.`
          : `Version ${from} → ${to}: ${added} line${added === 1 ? '' : 's'} added, ${removed} line${removed === 1 ? '' : 's'} removed.`}{' '}
        {missing.join(' ')}
      </Text>
      {added > 0 || removed > 0 ? (
        <Card size="1">
          <pre style={{ margin: 0, fontSize: 13 }}>
            {parts.map((p, i) =>
              p.added ? (
                // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one diff, in order
                <ins key={i} className="diff-add">
                  <VisuallyHidden>Added: </VisuallyHidden>
                  {p.value}
                </ins>
              ) : p.removed ? (
                // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one diff, in order
                <del key={i} className="diff-del">
                  <VisuallyHidden>Removed: </VisuallyHidden>
                  {p.value}
                </del>
              ) : (
                // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one diff, in order
                <span key={i}>{p.value}</span>
              ),
            )}
          </pre>
        </Card>
      ) : null}
    </Flex>
  );
};
