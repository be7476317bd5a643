import type { AskCitation } from '@atlas/stores';
import type { AskEvent, AskSource } from './types.js';

/**
 * Turns answer text into token and citation events: markers `[n]` are held back until complete, kept only when n
 * is a source (else dropped; all dropped when citations are off), and the first occurrence of each emits that
 * source's citation event (spec rules 2 and 3: one citation event per source referenced, ids matching the text).
 * Text is emitted as tokens of one word (with its following space) each.
 */
export class AnswerStream {
  text = '';
  readonly citations: AskCitation[] = [];
  private pending = '';
  private readonly cited = new Set<number>();
  constructor(
    private readonly messageId: string,
    private readonly sources: readonly AskSource[],
    private readonly includeCitations: boolean,
  ) {}

  *push(delta: string): Generator<AskEvent> {
    this.pending += delta;
    // Emit everything up to a possibly unfinished marker at the end.
    const open = this.pending.lastIndexOf('[');
    const cut =
      open >= 0 && !this.pending.slice(open).includes(']') && this.pending.length - open <= 6
        ? open
        : this.pending.length;
    const ready = this.pending.slice(0, cut);
    this.pending = this.pending.slice(cut);
    yield* this.emit(ready);
  }

  *flush(): Generator<AskEvent> {
    const rest = this.pending;
    this.pending = '';
    yield* this.emit(rest);
  }

  private *emit(text: string): Generator<AskEvent> {
    if (!text) return;
    const fresh: AskCitation[] = [];
    const kept = text.replace(/ ?\[(\d{1,3})\]/g, (whole, num: string) => {
      const n = Number(num);
      const source = this.sources.find((s) => s.n === n);
      if (!source || !this.includeCitations) return '';
      if (!this.cited.has(n)) {
        this.cited.add(n);
        fresh.push(source.citation);
      }
      return whole;
    });
    for (const piece of kept.match(/\S*\s*|\s+/g) ?? []) {
      if (!piece) continue;
      this.text += piece;
      yield { type: 'token', content: piece, message_id: this.messageId };
    }
    for (const c of fresh) {
      this.citations.push(c);
      yield { type: 'citation', citation: c };
    }
  }
}
