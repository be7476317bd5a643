import { Button, Callout, Flex, Text } from '@radix-ui/themes';
import { type ReactNode, useId } from 'react';
import { formatTime } from '../api/hooks';

/**
 * An `?as_of=` of the address (issue 27 point 2, "As of a date"): what the URL says (`param`), the instant the API's
 * `as_of` receives, and the UTC day a date control shows. A bare day (`2026-06-03`, what the date controls write) stands
 * for the end of that day in UTC (`2026-06-03T23:59:59.999Z`), so everything of the chosen day counts; an ISO 8601
 * date-time (a shared link to one version, "Show the first version") is that instant.
 */
export interface AsOf {
  param: string;
  instant: string;
  day: string;
  /** Whether the address names a whole day (read as its end, UTC) rather than an instant. */
  wholeDay: boolean;
}

/** The instant a day stands for: its end in UTC (`2026-06-03` → `2026-06-03T23:59:59.999Z`). */
export const endOfDayUtc = (day: string): string => `${day}T23:59:59.999Z`;

/** An `?as_of=` value read (AsOf); null when absent or neither a `YYYY-MM-DD` day nor an ISO 8601 date-time. */
export const parseAsOf = (value: string | null | undefined): AsOf | null => {
  if (!value) return null;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value))
    return Number.isNaN(Date.parse(`${value}T00:00:00Z`))
      ? null
      : { param: value, instant: endOfDayUtc(value), day: value, wholeDay: true };
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value)) return null;
  const t = Date.parse(value);
  if (Number.isNaN(t)) return null;
  const instant = new Date(t).toISOString();
  return { param: value, instant, day: instant.slice(0, 10), wholeDay: false };
};

/** A day as the reader's locale writes it ("3 Jun 2026"), read in UTC (the day an `as_of` names). */
export const formatDay = (day: string): string =>
  new Date(`${day}T12:00:00Z`).toLocaleDateString(undefined, { dateStyle: 'medium', timeZone: 'UTC' });

/** An AsOf in words: "the end of 3 Jun 2026 (UTC)" for a day, the local time for an instant. */
export const describeAsOf = (a: AsOf): string =>
  a.wholeDay ? `the end of ${formatDay(a.day)} (UTC)` : formatTime(a.instant);

/** Today as `YYYY-MM-DD` in UTC (the latest day an "As of" control offers). */
export const todayUtc = (): string => new Date().toISOString().slice(0, 10);

/**
 * An "As of" date control: a labelled native date input showing the UTC day of `value` (today at the latest) and,
 * while one is set and `clearable` (default), a "Back to now" button. `onChange` receives the chosen day
 * (`YYYY-MM-DD`, read as its end in UTC), or null to return to now.
 */
export const AsOfControl = ({
  value,
  onChange,
  label = 'As of',
  clearable = true,
}: {
  value: AsOf | null;
  onChange: (day: string | null) => void;
  label?: string;
  clearable?: boolean;
}) => {
  const id = useId();
  return (
    <Flex gap="2" align="center" wrap="wrap" data-testid="as-of-control">
      <Text as="label" htmlFor={id} size="2" weight="bold">
        {label}
      </Text>
      <input
        id={id}
        type="date"
        value={value?.day ?? ''}
        max={todayUtc()}
        title="Read as it stood at the end of this day (UTC)"
        onChange={(e) => onChange(parseAsOf(e.target.value)?.day ?? null)}
      />
      <Text size="1" color="gray">
        end of the day, UTC
      </Text>
      {value && clearable ? (
        <Button size="1" variant="soft" onClick={() => onChange(null)}>
          Back to now
        </Button>
      ) : null}
    </Flex>
  );
};

/**
 * The amber notice of a view read as of a day: "Showing the <what> as of <the day>: <detail>" and a "Back to now"
 * button (`onBack`). `testId` names it for the browser tests (`facts-as-of`, `messages-as-of`, `graph-as-of`).
 */
export const AsOfNotice = ({
  asOf,
  what,
  detail,
  testId,
  onBack,
}: {
  asOf: AsOf;
  what: string;
  detail: ReactNode;
  testId: string;
  onBack: () => void;
}) => (
  <Callout.Root size="1" color="amber" highContrast role="status" data-testid={testId}>
    <Callout.Text>
      <Text weight="bold">
        Showing the {what} as of {describeAsOf(asOf)}
      </Text>
      : {detail}
    </Callout.Text>
    <Flex>
      <Button size="1" variant="soft" highContrast onClick={onBack}>
        Back to now
      </Button>
    </Flex>
  </Callout.Root>
);
