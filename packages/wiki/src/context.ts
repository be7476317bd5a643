// The render context: one per render run, passed down to every page; and the citations of one page.
import { type CitationOptions, citationFor, verifyCitation } from './citations.js';
import { RenderMemo } from './memo.js';
import { citationMarkers, factText, MARKER } from './page-text.js';
import { keyFactScore, keyFacts } from './rank.js';
import type { RenderInput, SourceMessage, WikiCitation, WikiFact, WikiPage } from './types.js';

/**
 * A short key of the display names a message's excerpts render with: the names (from `names`) of the users its text
 * mentions without a label, the only part of a citation that user names change (citations.ts renderMarkup). A
 * memoised citation of the message is reused only under an equal key, so a user whose name became known since
 * invalidates the citations of the messages that mention them, and no others. '' when it mentions nobody.
 */
function mentionKey(memo: RenderMemo, msg: SourceMessage, names: ReadonlyMap<string, string> | undefined): string {
  let ids = memo.mentioned.get(msg);
  if (!ids) {
    const found = new Set<string>();
    for (const m of (msg.text ?? '').matchAll(/<([^<>\s][^<>]*)>/g)) {
      const inner = m[1]!;
      if (inner.startsWith('@') && !inner.includes('|')) found.add(inner.replace(/^@[!&]?/, ''));
    }
    ids = [...found];
    memo.mentioned.set(msg, ids);
  }
  return ids.map((id) => `${id}\u0000${names?.get(id) ?? ''}`).join('\u0001');
}

/**
 * verifyCitation, memoised in `memo` per (citation object, message object, user names) when it passed
 * (RenderMemo.verified).
 */
export function verifiedCitation(
  memo: RenderMemo,
  c: WikiCitation,
  msg: SourceMessage,
  opts: CitationOptions,
): boolean {
  const names = mentionKey(memo, msg, opts.userNames);
  const seen = memo.verified.get(c);
  if (seen && seen.msg === msg && seen.names === names) return true;
  const ok = verifyCitation(c, msg, opts);
  if (ok) memo.verified.set(c, { msg, names });
  return ok;
}

/**
 * The context of one render run (renderPages), passed down to every page: the input, the citations built and
 * verified in this run, and the memo tables (`memo`: a fresh RenderMemo unless the caller keeps one across runs).
 */
export class RenderContext {
  readonly opts: CitationOptions;
  /** Fact id → its verified citation (id `[1]`), or null when it cannot be cited; computed once per run. */
  private readonly cited = new Map<string, WikiCitation | null>();
  /** Fact id → the excerpt used (or null): what renderPages hands back for the next run's `excerpts`. */
  readonly excerpts = new Map<string, string | null>();
  constructor(
    readonly input: RenderInput,
    readonly memo: RenderMemo = new RenderMemo(),
  ) {
    this.opts = input.user_names ? { userNames: input.user_names } : {};
  }
  /**
   * The fact's verified citation (numbered `[1]`; the page renumbers it), or null when it cannot be cited. Reuses
   * the citation of an earlier run for the same fact and message objects under the same user names (RenderMemo.cited).
   */
  citation(fact: WikiFact): WikiCitation | null {
    let c = this.cited.get(fact.id);
    if (c === undefined) {
      const msg = this.input.messages.get(fact.source_message_id);
      const memo = msg ? this.memo.cited.get(fact) : undefined;
      const names = msg ? mentionKey(this.memo, msg, this.input.user_names) : '';
      if (msg && memo && memo.msg === msg && memo.names === names) {
        c = memo.citation;
        this.excerpts.set(fact.id, memo.excerpt);
      } else {
        const known = this.input.excerpts?.get(fact.id);
        const built = msg ? citationFor(1, fact, msg, this.opts, known) : null;
        c = msg && built && verifyCitation(built, msg, this.opts) ? built : null;
        if (c && msg) this.memo.verified.set(c, { msg, names });
        if (msg) {
          const excerpt = built?.text_excerpt ?? null;
          this.excerpts.set(fact.id, excerpt);
          this.memo.cited.set(fact, { msg, names, citation: c, excerpt });
        }
      }
      this.cited.set(fact.id, c);
    }
    return c;
  }
  /** factText, memoised in this run's memo tables. */
  factText(fact: Pick<WikiFact, 'memory_text'>): string {
    return factText(fact, this.memo);
  }
  /** Whether a verified citation can be built for the fact. */
  canCite(fact: WikiFact): boolean {
    return this.citation(fact) !== null;
  }
  score(fact: WikiFact): number {
    return keyFactScore(fact, { now: this.input.now, citationCount: this.input.citation_counts?.get(fact.id) ?? 0 });
  }
  /** rank.ts keyFacts over the facts that can be cited; `onTopic` as there (a topic page's relevance test). */
  keyFacts(
    facts: readonly WikiFact[],
    n: number,
    onTopic?: (fact: WikiFact) => boolean,
    titled?: (fact: WikiFact) => boolean,
  ): WikiFact[] {
    return keyFacts(
      facts.filter((f) => this.canCite(f)),
      n,
      {
        now: this.input.now,
        ...(this.input.citation_counts ? { citationCounts: this.input.citation_counts } : {}),
        ...(onTopic ? { onTopic } : {}),
        ...(titled ? { titled } : {}),
      },
    );
  }
}

/** Citations of one page under construction. */
export class PageCitations {
  readonly list: WikiCitation[] = [];
  readonly facts = new Map<string, WikiFact>();
  private readonly byKey = new Map<string, string>();
  constructor(private readonly ctx: RenderContext) {}
  /** The marker citing `fact`, or null when it cannot be cited (the claim must then be left out). */
  cite(fact: WikiFact): string | null {
    const verified = this.ctx.citation(fact);
    if (!verified) return null;
    const c = { ...verified, id: `[${this.list.length + 1}]` };
    this.facts.set(fact.id, fact);
    const key = `${c.permalink}\u0000${c.text_excerpt}`;
    const existing = this.byKey.get(key);
    if (existing) return existing;
    this.byKey.set(key, c.id);
    this.list.push(c);
    return c.id;
  }
  /** `text` as one cited Markdown line ending with its marker, or null when uncitable. */
  claim(fact: WikiFact, text = this.ctx.factText(fact)): string | null {
    const marker = this.cite(fact);
    return marker ? `${text} ${marker}` : null;
  }
}

/** Renumbers the markers of a page by first appearance in `content`, keeping only citations used. */
export function finishPage(
  base: Omit<WikiPage, 'citations' | 'content' | 'summary'>,
  content: string,
  summary: string,
  cites: PageCitations,
): WikiPage {
  const used = citationMarkers(content);
  const remap = new Map(used.map((m, i) => [m, `[${i + 1}]`]));
  const byId = new Map(cites.list.map((c) => [c.id, c]));
  const rewrite = (s: string) => s.replace(MARKER, (m) => remap.get(m) ?? m);
  const citations = used.map((m) => ({ ...byId.get(m)!, id: remap.get(m)! }));
  return { ...base, content: rewrite(content), summary: rewrite(summary), citations };
}
