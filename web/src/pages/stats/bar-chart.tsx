import { Box, Flex, SegmentedControl, Text, VisuallyHidden } from '@radix-ui/themes';
import { type ReactNode, useEffect, useRef, useState } from 'react';
import { formatCount } from '../../api/hooks';

/** One row of a bar chart: its label, the value the bar's width follows, and optional text after the number. */
export interface Bar {
  key: string;
  label: ReactNode;
  value: number;
  /** A second, lighter bar drawn over the first (e.g. the last 7 days inside the last 30). */
  inner?: number;
  /** What the number is, shown after it ("messages", "facts"). */
  unit?: string;
  /** More text after the number (e.g. "7 d: 12", a trend badge). */
  detail?: ReactNode;
}

/**
 * A horizontal bar chart made of plain elements (no chart library): each row is its label, a bar whose width is
 * proportional to the value (app.css `.bar`; decorative, hidden from screen readers) and the number as text, so the
 * chart reads as a list. `inner` draws a second bar inside the first.
 */
export const BarChart = ({ bars, label }: { bars: Bar[]; label: string }) => {
  const max = Math.max(1, ...bars.map((b) => b.value));
  return (
    <ol aria-label={label} style={{ listStyle: 'none', padding: 0, margin: 0 }}>
      {bars.map((b) => (
        <li key={b.key} style={{ marginBottom: 10 }}>
          <Flex justify="between" gap="2" wrap="wrap" align="baseline">
            <Text size="2" weight="medium" style={{ overflowWrap: 'anywhere', minWidth: 0 }}>
              {b.label}
            </Text>
            <Text size="2" color="gray">
              <Text weight="bold" highContrast>
                {formatCount(b.value)}
              </Text>
              {b.unit ? ` ${b.unit}` : ''}
              {b.detail ? <> {b.detail}</> : null}
            </Text>
          </Flex>
          <Box
            aria-hidden
            style={{ position: 'relative', background: 'var(--gray-a3)', borderRadius: 3, marginTop: 3 }}
          >
            <div className="bar" style={{ width: `${(b.value / max) * 100}%`, minWidth: b.value > 0 ? 2 : 0 }} />
            {b.inner !== undefined ? (
              <div
                className="bar"
                style={{
                  position: 'absolute',
                  top: 0,
                  left: 0,
                  width: `${(b.inner / max) * 100}%`,
                  minWidth: b.inner > 0 ? 2 : 0,
                  background: 'var(--accent-12)',
                }}
              />
            ) : null}
          </Box>
        </li>
      ))}
    </ol>
  );
};

/**
 * A chart with a table alternative: a "Chart | Table" switch above `chart` and `table` (both given by the caller).
 */
export const ChartOrTable = ({ title, chart, table }: { title: string; chart: ReactNode; table: ReactNode }) => {
  const [view, setView] = useState<'chart' | 'table'>('chart');
  return (
    <Flex direction="column" gap="2">
      <Flex justify="end">
        <SegmentedControl.Root
          size="1"
          value={view}
          onValueChange={(v) => setView(v as 'chart' | 'table')}
          aria-label={`Show ${title} as`}
        >
          <SegmentedControl.Item value="chart">Chart</SegmentedControl.Item>
          <SegmentedControl.Item value="table">Table</SegmentedControl.Item>
        </SegmentedControl.Root>
      </Flex>
      {view === 'chart' ? chart : table}
    </Flex>
  );
};

/** A table's name for screen readers and tests (a visually hidden `<caption>`; Radix's Table.Root puts props on its wrapper). */
export const TableCaption = ({ children }: { children: ReactNode }) => (
  <VisuallyHidden asChild>
    <caption>{children}</caption>
  </VisuallyHidden>
);

/**
 * Holds a wide Radix table: when the table is wider than the screen (390 px), its scroll area (Radix's viewport,
 * which takes no props) becomes a named, focusable region, so a keyboard can scroll it (axe
 * scrollable-region-focusable).
 */
export const ScrollTable = ({ label, children }: { label: string; children: ReactNode }) => {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const viewport = ref.current?.querySelector<HTMLElement>('[data-radix-scroll-area-viewport]');
    if (!viewport) return;
    viewport.tabIndex = 0;
    viewport.setAttribute('role', 'region');
    viewport.setAttribute('aria-label', `${label} (scrolls sideways)`);
  });
  return <div ref={ref}>{children}</div>;
};
