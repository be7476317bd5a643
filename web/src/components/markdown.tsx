import { type ReactNode, useMemo, useRef } from 'react';
import ReactMarkdown, { type Components } from 'react-markdown';
import { Link } from 'react-router';
import remarkGfm from 'remark-gfm';
import { type CitationLike, CitationMarker, safeHref } from './citation';

/** `[n]` not followed by `(`: a citation marker, turned into a `#cite-n` link for the renderer to replace. */
const MARKER = /\[(\d{1,3})\](?!\()/g;

/**
 * Markdown rendered safely (docs/web.md "Safety"): react-markdown with GitHub tables and lists, raw HTML never
 * rendered (shown as text), unsafe URLs dropped. `[n]` markers become citation hover cards from `citations` (by id
 * `[n]`); a relative link goes through `resolveLink` (a wiki slug to the UI's page; null: plain text); http(s) links
 * open in a new tab without a referrer. `components` overrides renderers (the wiki gives its headings ids for its table of
 * contents); the defaults shift headings one level down (the screen's title is the h1).
 */
export const Markdown = ({
  content,
  citations = [],
  resolveLink,
  components: overrides,
}: {
  content: string;
  citations?: readonly CitationLike[];
  resolveLink?: (href: string) => string | null;
  components?: Components;
}): ReactNode => {
  // The renderers keep one identity across renders (they read the latest citations and resolver from a ref): a new
  // `a` renderer on every render would remount each marker and close an open hover card while an answer streams.
  const latest = useRef({ citations, resolveLink });
  latest.current = { citations, resolveLink };
  const base = useMemo<Components>(
    () => ({
      a({ href, children }) {
        if (href?.startsWith('#cite-')) {
          const label = `[${href.slice(6)}]`;
          return <CitationMarker label={label} citation={latest.current.citations.find((c) => c.id === label)} />;
        }
        const external = safeHref(href);
        if (external)
          return (
            <a href={external} target="_blank" rel="noopener noreferrer">
              {children}
            </a>
          );
        const resolve = latest.current.resolveLink;
        const to = href && resolve ? resolve(href) : null;
        return to ? <Link to={to}>{children}</Link> : <span>{children}</span>;
      },
      h1: ({ children }) => <h2>{children}</h2>, // the page's title is the h1
      h2: ({ children }) => <h3>{children}</h3>,
      h3: ({ children }) => <h4>{children}</h4>,
    }),
    [],
  );
  const components = useMemo(() => ({ ...base, ...overrides }), [base, overrides]);
  return (
    <div className="markdown">
      <ReactMarkdown remarkPlugins={[remarkGfm]} components={components} skipHtml={false}>
        {content.replace(MARKER, '[[$1]](#cite-$1)')}
      </ReactMarkdown>
    </div>
  );
};
