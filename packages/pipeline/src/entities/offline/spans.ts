// Spans: where a rule found a name in a text, as character offsets.

export interface Span {
  name: string;
  index: number;
  end: number;
}

export interface MeetingSpan extends Span {
  kind: string;
  named: boolean;
}
