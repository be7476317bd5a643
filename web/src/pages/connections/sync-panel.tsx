import { CheckIcon, UpdateIcon } from '@radix-ui/react-icons';
import {
  Badge,
  Box,
  Button,
  Callout,
  Card,
  Checkbox,
  Code,
  Flex,
  Heading,
  Progress,
  Switch,
  Table,
  Text,
  TextField,
  VisuallyHidden,
} from '@radix-ui/themes';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { ApiError, api, unwrap } from '../../api/client';
import { formatCount, formatTime, useIsAdmin, useIsMember, useWide } from '../../api/hooks';
import { Empty, ErrorState, Loading, QueryView } from '../../components/states';

/** Spec "Sync job" current_stage values, in their order. */
export const STAGES = [
  ['fetching_messages', 'Fetching messages'],
  ['extracting_facts', 'Extracting facts'],
  ['building_graph', 'Building the graph'],
  ['generating_wiki', 'Generating the wiki'],
] as const;

const OPEN = new Set(['queued', 'running']);

/** Spec "Sync errors": whether and when a failed sync may be retried, by code. */
const RETRY: Record<string, string> = {
  PLATFORM_ERROR: 'Retry after the wait the platform asked for.',
  AUTH_ERROR: 'Do not retry: update the connection’s credentials (re-authentication required).',
  RATE_LIMIT: 'Retry after the wait the platform asked for.',
  CHANNEL_NOT_FOUND: 'Do not retry: the channel no longer exists on the platform.',
  INTERNAL_ERROR: 'Retry.',
};

const STATUS_COLOR = {
  queued: 'gray',
  running: 'blue',
  completed: 'green',
  failed: 'red',
  cancelled: 'amber',
} as const;

/** A sync job's status (spec "Sync states") as a badge. */
export const SyncStatusBadge = ({ status }: { status: string }) => (
  <Badge highContrast color={STATUS_COLOR[status as keyof typeof STATUS_COLOR] ?? 'gray'}>
    {status}
  </Badge>
);

/** Seconds as "42 s" or "3 min 5 s". */
const duration = (s: number) => (s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`);

/**
 * The latest sync job of a channel (GET /api/channels/{channel_id}/sync/status), polled every second while it is
 * queued or running; null before the channel's first sync (the API answers 404).
 */
export const useSyncStatus = (channelId: string) =>
  useQuery({
    queryKey: ['sync-status', channelId],
    queryFn: async () => {
      try {
        return await unwrap(
          api.GET('/api/channels/{channel_id}/sync/status', { params: { path: { channel_id: channelId } } }),
        );
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) return null;
        throw e;
      }
    },
    refetchInterval: (q) => (q.state.data && OPEN.has(q.state.data.status) ? 1000 : false),
  });

/** The stages of a job (spec "Sync job" current_stage, in order): done, current (aria-current) or to come. */
const StageSteps = ({ stage, status }: { stage: string; status: string }) => {
  const at = STAGES.findIndex(([s]) => s === stage);
  return (
    <Flex asChild gap="2" wrap="wrap">
      <ol aria-label="Sync stages" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
        {STAGES.map(([s, label], i) => {
          const done = status === 'completed' || i < at;
          const current = !done && i === at && OPEN.has(status);
          return (
            <li key={s} aria-current={current ? 'step' : undefined}>
              <Badge
                size="2"
                variant={current ? 'solid' : 'soft'}
                color={done ? 'green' : current ? 'blue' : 'gray'}
                highContrast={current}
              >
                {done ? <CheckIcon aria-hidden /> : current ? <UpdateIcon aria-hidden /> : null}
                {i + 1}. {label}
                <VisuallyHidden>{done ? ' (done)' : current ? ' (now)' : ''}</VisuallyHidden>
              </Badge>
            </li>
          );
        })}
      </ol>
    </Flex>
  );
};

/**
 * A channel's sync (issue 26 point 7; spec "Sync", "Sync job", "Sync states", "Sync errors"): "Sync now" (POST
 * /api/channels/{channel_id}/sync, optionally a forced full re-sync) and "Cancel" (POST /api/sync/cancel with the job
 * id) for members; the latest job's status, live stage and progress from GET /api/channels/{channel_id}/sync/status
 * polled every second while it runs; a failed job's error (code, message, retry_after, failing message) with the
 * spec's retry advice; and the channel's run history (GET /api/sync/history, last 10). Readers see status and
 * history only; the server refuses sync and cancel to them anyway.
 */
export const SyncPanel = ({ channelId }: { channelId: string }) => {
  const qc = useQueryClient();
  const isMember = useIsMember();
  const wide = useWide();
  const status = useSyncStatus(channelId);
  const history = useQuery({
    queryKey: ['sync-history', channelId],
    queryFn: () => unwrap(api.GET('/api/sync/history', { params: { query: { channel_id: channelId, limit: 10 } } })),
  });
  const [force, setForce] = useState(false);
  const forceId = useId();
  const job = status.data ?? null;
  const open = job ? OPEN.has(job.status) : false;

  // When a job ends, the history, the channel's counts and the connection lists change.
  const wasOpen = useRef(open);
  useEffect(() => {
    if (wasOpen.current && !open) {
      void qc.invalidateQueries({ queryKey: ['sync-history', channelId] });
      void qc.invalidateQueries({ queryKey: ['channels'] });
      void qc.invalidateQueries({ queryKey: ['connections'] });
      void qc.invalidateQueries({ queryKey: ['sync-schedules'] });
    }
    wasOpen.current = open;
  }, [open, qc, channelId]);

  const start = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/channels/{channel_id}/sync', {
          params: { path: { channel_id: channelId } },
          body: { force },
        }),
      ),
    onSuccess: () => {
      cancel.reset();
      void qc.invalidateQueries({ queryKey: ['sync-status', channelId] });
      void qc.invalidateQueries({ queryKey: ['sync-history', channelId] });
    },
  });
  const cancel = useMutation({
    mutationFn: (jobId: string) => unwrap(api.POST('/api/sync/cancel', { body: { job_id: jobId } })),
    onSettled: () => {
      void qc.invalidateQueries({ queryKey: ['sync-status', channelId] });
      void qc.invalidateQueries({ queryKey: ['sync-history', channelId] });
    },
  });

  return (
    <Flex direction="column" gap="4">
      <Card>
        <Flex direction="column" gap="3">
          <Flex align="center" justify="between" gap="3" wrap="wrap">
            <Heading as="h3" size="3">
              Sync status
            </Heading>
            {isMember ? (
              <Flex align="center" gap="3" wrap="wrap">
                <Text as="label" size="2" htmlFor={forceId}>
                  <Flex gap="2" align="center">
                    <Checkbox id={forceId} checked={force} onCheckedChange={(v) => setForce(v === true)} />
                    Full re-sync
                  </Flex>
                </Text>
                <Button onClick={() => start.mutate()} loading={start.isPending} disabled={open}>
                  Sync now
                </Button>
                {open && job ? (
                  <Button
                    color="red"
                    variant="soft"
                    onClick={() => cancel.mutate(job.job_id)}
                    loading={cancel.isPending}
                  >
                    Cancel sync
                  </Button>
                ) : null}
              </Flex>
            ) : null}
          </Flex>
          {start.error ? <ErrorState error={start.error} /> : null}
          {cancel.error ? <ErrorState error={cancel.error} /> : null}
          {cancel.data ? (
            <Callout.Root color="amber" highContrast role="status">
              <Callout.Text>
                Cancel requested for job <Code>{cancel.data.job_id}</Code> at {formatTime(cancel.data.cancelled_at)}.
              </Callout.Text>
            </Callout.Root>
          ) : null}
          {status.isPending ? (
            <Loading label="Loading the sync status" lines={2} />
          ) : status.error ? (
            <ErrorState error={status.error} retry={() => void status.refetch()} />
          ) : !job ? (
            <Empty title="Not synced yet.">
              {isMember ? 'Sync now fetches the channel’s messages from its connection.' : null}
            </Empty>
          ) : (
            <Flex direction="column" gap="3" aria-live="polite" aria-label="Latest sync">
              <Flex gap="3" align="center" wrap="wrap">
                <SyncStatusBadge status={job.status} />
                <Text size="2" color="gray">
                  started {formatTime(job.started_at)}
                  {job.completed_at ? `, ended ${formatTime(job.completed_at)}` : ''}
                  {job.estimated_completion ? `, done by about ${formatTime(job.estimated_completion)}` : ''}
                </Text>
              </Flex>
              <StageSteps stage={job.current_stage} status={job.status} />
              <Box>
                <Progress
                  value={Math.round(job.progress.percentage)}
                  aria-label="Sync progress"
                  color={job.status === 'failed' ? 'red' : job.status === 'cancelled' ? 'amber' : undefined}
                />
                <Text as="p" size="2" mt="1">
                  {Math.round(job.progress.percentage)}% · {formatCount(job.progress.processed_messages)} of{' '}
                  {formatCount(job.progress.total_messages)} messages processed
                  {job.progress.failing_messages > 0 ? ` · ${formatCount(job.progress.failing_messages)} failing` : ''}
                </Text>
              </Box>
              {job.error ? (
                <Callout.Root color="red" role="alert">
                  <Callout.Text>
                    <Text weight="bold">{job.error.code}</Text>: {job.error.message}
                    {job.error.details.retry_after != null ? ` Retry after ${job.error.details.retry_after} s.` : ''}
                    {job.error.details.failing_message_id ? (
                      <>
                        {' '}
                        Failing message <Code>{job.error.details.failing_message_id}</Code>.
                      </>
                    ) : null}{' '}
                    {RETRY[job.error.code] ?? ''}
                  </Callout.Text>
                </Callout.Root>
              ) : null}
            </Flex>
          )}
        </Flex>
      </Card>
      <Box>
        <Heading as="h3" size="3" mb="2">
          Run history
        </Heading>
        <QueryView query={history} label="Loading the run history">
          {({ history: runs }) =>
            runs.length === 0 ? (
              <Empty title="No run yet." />
            ) : !wide ? (
              <Flex asChild direction="column" gap="2">
                <ul aria-label="Run history" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
                  {runs.map((r) => (
                    <li key={r.job_id} data-job-id={r.job_id}>
                      <Card size="1">
                        <Flex direction="column" gap="1">
                          <Flex gap="2" align="center" wrap="wrap">
                            <SyncStatusBadge status={r.status} />
                            <Text size="2">{formatTime(r.started_at)}</Text>
                            <Text size="2" color="gray">
                              {duration(r.duration_seconds)}
                            </Text>
                          </Flex>
                          <Text size="2">
                            {formatCount(r.messages_synced)} messages · {formatCount(r.facts_extracted)} facts ·{' '}
                            {formatCount(r.entities_created)} entities
                          </Text>
                          {r.error ? (
                            <Text size="1">
                              <Code>{r.error.code}</Code> {r.error.message}
                            </Text>
                          ) : null}
                        </Flex>
                      </Card>
                    </li>
                  ))}
                </ul>
              </Flex>
            ) : (
              <section aria-label="Run history">
                <Table.Root size="1" variant="surface">
                  <Table.Header>
                    <Table.Row>
                      <Table.ColumnHeaderCell>Started</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell>Status</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell justify="end">Duration</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell justify="end">Messages</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell justify="end">Facts</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell justify="end">Entities</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell>Error</Table.ColumnHeaderCell>
                    </Table.Row>
                  </Table.Header>
                  <Table.Body>
                    {runs.map((r) => (
                      <Table.Row key={r.job_id} data-job-id={r.job_id}>
                        <Table.RowHeaderCell>{formatTime(r.started_at)}</Table.RowHeaderCell>
                        <Table.Cell>
                          <SyncStatusBadge status={r.status} />
                        </Table.Cell>
                        <Table.Cell justify="end">{duration(r.duration_seconds)}</Table.Cell>
                        <Table.Cell justify="end">{formatCount(r.messages_synced)}</Table.Cell>
                        <Table.Cell justify="end">{formatCount(r.facts_extracted)}</Table.Cell>
                        <Table.Cell justify="end">{formatCount(r.entities_created)}</Table.Cell>
                        <Table.Cell>
                          {r.error ? (
                            <Text size="1">
                              <Code>{r.error.code}</Code> {r.error.message}
                            </Text>
                          ) : (
                            '—'
                          )}
                        </Table.Cell>
                      </Table.Row>
                    ))}
                  </Table.Body>
                </Table.Root>
              </section>
            )
          }
        </QueryView>
      </Box>
    </Flex>
  );
};

/** Common five-field cron expressions (UTC) offered beside the schedule box. */
const PRESETS = [
  ['Every hour', '0 * * * *'],
  ['Every 6 hours', '0 */6 * * *'],
  ['Daily at 03:00 UTC', '0 3 * * *'],
] as const;

/** The saved sync schedules (GET /api/sync/schedules). */
export const useSchedules = () =>
  useQuery({ queryKey: ['sync-schedules'], queryFn: () => unwrap(api.GET('/api/sync/schedules')) });

/**
 * A channel's sync schedule (spec "Sync schedule", "Sync"; docs/sync.md "Sync schedules"): the saved cron expression
 * (five fields, UTC), enabled, next run and last sync from GET /api/sync/schedules; admins edit it (PUT
 * /api/sync/schedules `{channel_id, schedule, enabled}`) and see the next run the API answers; a bad expression shows
 * the API's 400 message.
 */
export const ScheduleEditor = ({ channelId }: { channelId: string }) => {
  const qc = useQueryClient();
  const isAdmin = useIsAdmin();
  const schedules = useSchedules();
  const saved = schedules.data?.schedules.find((s) => s.channel_id === channelId) ?? null;
  const [expr, setExpr] = useState<string | null>(null);
  const [enabled, setEnabled] = useState<boolean | null>(null);
  const exprId = useId();
  const enabledId = useId();
  const save = useMutation({
    mutationFn: (body: { channel_id: string; schedule: string; enabled: boolean }) =>
      unwrap(api.PUT('/api/sync/schedules', { body })),
    onSuccess: () => {
      setExpr(null);
      setEnabled(null);
      void qc.invalidateQueries({ queryKey: ['sync-schedules'] });
    },
  });
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new channel starts a new edit
  useEffect(() => {
    setExpr(null);
    setEnabled(null);
    save.reset();
  }, [channelId]);

  if (schedules.isPending) return <Loading label="Loading the schedule" lines={2} />;
  if (schedules.error) return <ErrorState error={schedules.error} retry={() => void schedules.refetch()} />;
  const value = expr ?? saved?.schedule ?? '';
  const on = enabled ?? saved?.enabled ?? true;
  const shown = save.data ?? saved;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate({ channel_id: channelId, schedule: value.trim(), enabled: on });
  };

  return (
    <Card>
      <Flex direction="column" gap="3">
        <Heading as="h3" size="3">
          Sync schedule
        </Heading>
        {shown ? (
          <Flex direction="column" gap="1" role="status" aria-label="Saved schedule">
            <Text size="2">
              <Code>{shown.schedule}</Code> (UTC), {shown.enabled ? 'enabled' : 'disabled'}
            </Text>
            <Text size="2">
              Next run:{' '}
              <Text weight="bold">
                {shown.next_sync ? formatTime(shown.next_sync) : shown.enabled ? 'none' : '— (disabled)'}
              </Text>
              {shown.next_sync ? <Text color="gray"> ({shown.next_sync.replace('.000Z', 'Z')})</Text> : null}
            </Text>
            <Text size="2" color="gray">
              Last sync: {formatTime(shown.last_sync)}
            </Text>
          </Flex>
        ) : (
          <Empty title="No schedule.">{isAdmin ? 'This channel syncs only when asked.' : null}</Empty>
        )}
        {isAdmin ? (
          <form onSubmit={submit} aria-label="Edit the sync schedule">
            <Flex direction="column" gap="2">
              <Text as="label" size="2" weight="medium" htmlFor={exprId}>
                Schedule (cron, five fields, UTC)
              </Text>
              <Flex gap="2" wrap="wrap" align="center">
                <Box flexGrow="1" minWidth="180px">
                  <TextField.Root
                    id={exprId}
                    value={value}
                    placeholder="0 * * * *"
                    onChange={(e) => setExpr(e.target.value)}
                    aria-describedby={`${exprId}-hint`}
                  />
                </Box>
                <Text as="label" size="2" htmlFor={enabledId}>
                  <Flex gap="2" align="center">
                    <Switch id={enabledId} checked={on} onCheckedChange={setEnabled} />
                    Enabled
                  </Flex>
                </Text>
                <Button type="submit" loading={save.isPending} disabled={!value.trim()}>
                  Save schedule
                </Button>
              </Flex>
              <Text id={`${exprId}-hint`} size="1" color="gray">
                minute hour day-of-month month day-of-week, e.g. <Code>*/30 * * * *</Code> every 30 minutes.
              </Text>
              <Flex gap="2" wrap="wrap">
                {PRESETS.map(([label, cron]) => (
                  <Button key={cron} type="button" size="1" variant="soft" onClick={() => setExpr(cron)}>
                    {label}
                  </Button>
                ))}
              </Flex>
              {save.error ? <ErrorState error={save.error} /> : null}
            </Flex>
          </form>
        ) : null}
      </Flex>
    </Card>
  );
};
