import { Button, Callout, Flex, Skeleton, Text } from '@radix-ui/themes';
import { type ReactNode, useEffect, useState } from 'react';
import { ApiError } from '../api/client';

/** A loading placeholder: `lines` skeleton rows, announced to screen readers. */
export const Loading = ({ label = 'Loading', lines = 3 }: { label?: string; lines?: number }) => (
  <Flex direction="column" gap="2" role="status" aria-live="polite" aria-label={label}>
    {Array.from({ length: lines }, (_, i) => (
      // biome-ignore lint/suspicious/noArrayIndexKey: placeholders have no identity
      <Skeleton key={i} height="18px" width={`${90 - i * 12}%`} />
    ))}
  </Flex>
);

/** An empty state: what is missing and, as children, what to do about it. */
export const Empty = ({ title, children }: { title: string; children?: ReactNode }) => (
  <Callout.Root color="gray" variant="surface">
    <Callout.Text>
      <Text weight="bold">{title}</Text>
      {children ? <> {children}</> : null}
    </Callout.Text>
  </Callout.Root>
);

/** Seconds left of a Retry-After, counting down once a second to 0. */
export const useCountdown = (seconds: number | null): number => {
  const [left, setLeft] = useState(seconds ?? 0);
  useEffect(() => {
    setLeft(seconds ?? 0);
    if (!seconds) return;
    const started = Date.now();
    const t = setInterval(() => {
      const l = Math.max(0, seconds - Math.floor((Date.now() - started) / 1000));
      setLeft(l);
      if (l === 0) clearInterval(t);
    }, 250);
    return () => clearInterval(t);
  }, [seconds]);
  return left;
};

/**
 * An error: the API's message and code (the shared error body), a countdown for 429 RATE_LIMIT_EXCEEDED, and a retry
 * button when `retry` is given (disabled while the countdown runs).
 */
export const ErrorState = ({ error, retry }: { error: unknown; retry?: () => void }) => {
  const api = error instanceof ApiError ? error : null;
  const left = useCountdown(api?.retryAfter ?? null);
  const message = api ? api.message : error instanceof Error ? error.message : String(error);
  return (
    <Callout.Root color="red" role="alert">
      <Callout.Text>
        {api?.status === 429 ? 'Too many requests. ' : ''}
        {message}
        {api ? <Text color="gray"> ({api.code})</Text> : null}
        {left > 0 ? <Text> Try again in {left} s.</Text> : null}
      </Callout.Text>
      {retry ? (
        <Flex>
          <Button size="1" variant="soft" onClick={retry} disabled={left > 0}>
            Retry
          </Button>
        </Flex>
      ) : null}
    </Callout.Root>
  );
};

/** The states of a query in one place: loading, error (with retry), else the children with its data. */
export const QueryView = <T,>({
  query,
  label,
  children,
}: {
  query: { isPending: boolean; error: unknown; data: T | undefined; refetch: () => unknown };
  label?: string;
  children: (data: T) => ReactNode;
}) => {
  if (query.isPending) return <Loading {...(label ? { label } : {})} />;
  if (query.error) return <ErrorState error={query.error} retry={() => void query.refetch()} />;
  return <>{children(query.data as T)}</>;
};

/** A page the UI does not have (the router's catch-all): says so and links home. */
export const NotFound = () => (
  <Empty title="There is no such page.">
    <a href="/">Go to the home page</a>.
  </Empty>
);
