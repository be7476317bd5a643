import { ReloadIcon } from '@radix-ui/react-icons';
import {
  AlertDialog,
  Badge,
  Box,
  Button,
  Callout,
  Dialog,
  Flex,
  Select,
  Table,
  Text,
  VisuallyHidden,
} from '@radix-ui/themes';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { formatCount, formatTime } from '../../api/hooks';
import type { paths } from '../../api/schema';
import { Empty, ErrorState, Loading, QueryView } from '../../components/states';
import { ScrollTable, TableCaption } from './bar-chart';
import { ChannelLink, Figure, useChannelNames } from './overview';

type Status = 'pending' | 'redriven' | 'all';
type Item =
  paths['/api/admin/dead-letters']['get']['responses'][200]['content']['application/json']['dead_letters'][number];

/** The answer of POST /api/admin/dead-letters/{id}/redrive (docs: README "Dead letters"). */
interface RedriveOne {
  id: string;
  status: 'redriven';
  event_type: string;
  redriven_at: string;
  redriven_to: { topic: string; partition: number; offset: number };
}
/** The answer of POST /api/admin/dead-letters/redrive. */
interface RedriveAll {
  redriven: number;
  failed: { id: string; error: string }[];
  remaining: number;
}

/** One dead letter's original event (GET /api/admin/dead-letters/{id}), in a dialog, as JSON text. */
const Details = ({ id }: { id: string }) => {
  const [open, setOpen] = useState(false);
  const item = useQuery({
    queryKey: ['dead-letter', id],
    queryFn: () => unwrap(api.GET('/api/admin/dead-letters/{id}', { params: { path: { id } } })),
    enabled: open,
  });
  return (
    <Dialog.Root open={open} onOpenChange={setOpen}>
      <Dialog.Trigger>
        <Button size="1" variant="ghost">
          Details
        </Button>
      </Dialog.Trigger>
      <Dialog.Content maxWidth="720px">
        <Dialog.Title>Dead letter {id}</Dialog.Title>
        <Dialog.Description size="2" color="gray">
          The failure and the original event as stored.
        </Dialog.Description>
        <Box mt="3">
          <QueryView query={item} label="Loading the dead letter">
            {(d) => (
              <pre
                style={{
                  whiteSpace: 'pre-wrap',
                  overflowWrap: 'anywhere',
                  fontSize: 12,
                  maxHeight: 420,
                  overflow: 'auto',
                }}
              >
                {JSON.stringify(d, null, 2)}
              </pre>
            )}
          </QueryView>
        </Box>
        <Flex justify="end" mt="3">
          <Dialog.Close>
            <Button variant="soft">Close</Button>
          </Dialog.Close>
        </Flex>
      </Dialog.Content>
    </Dialog.Root>
  );
};

/** A confirmation dialog around a re-drive: `trigger` opens it, "Re-drive" runs `onConfirm`. */
const Confirm = ({
  trigger,
  title,
  text,
  onConfirm,
}: {
  trigger: React.ReactNode;
  title: string;
  text: string;
  onConfirm: () => void;
}) => (
  <AlertDialog.Root>
    <AlertDialog.Trigger>{trigger}</AlertDialog.Trigger>
    <AlertDialog.Content maxWidth="460px">
      <AlertDialog.Title>{title}</AlertDialog.Title>
      <AlertDialog.Description size="2">{text}</AlertDialog.Description>
      <Flex gap="3" mt="4" justify="end">
        <AlertDialog.Cancel>
          <Button variant="soft" color="gray">
            Cancel
          </Button>
        </AlertDialog.Cancel>
        <AlertDialog.Action>
          <Button onClick={onConfirm}>Re-drive</Button>
        </AlertDialog.Action>
      </Flex>
    </AlertDialog.Content>
  </AlertDialog.Root>
);

/**
 * Dead letters (admins; GET /api/admin/dead-letters, spec "Degraded behaviour": events a projector could not apply,
 * flagged for inspection after 5 failures): the counts, a status filter (in the URL, `dl`), the list with reason,
 * projector, event, attempts and failure time, each item's details, and re-drive of one item or of every pending one
 * (POST /api/admin/dead-letters/{id}/redrive and /redrive), each after a confirmation, with the result shown.
 */
export const DeadLetters = () => {
  const [params, setParams] = useSearchParams();
  const status = (
    ['pending', 'redriven', 'all'].includes(params.get('dl') ?? '') ? params.get('dl') : 'pending'
  ) as Status;
  const setStatus = (s: string) =>
    setParams(
      (p) => {
        p.set('dl', s);
        return p;
      },
      { replace: true },
    );
  const names = useChannelNames();
  const qc = useQueryClient();
  const list = useQuery({
    queryKey: ['dead-letters', status],
    queryFn: () =>
      unwrap(
        api.GET('/api/admin/dead-letters', {
          params: { query: { limit: 100, ...(status === 'all' ? {} : { status }) } },
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: 15_000,
  });
  const [result, setResult] = useState<string | null>(null);
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: ['dead-letters'] });
    void qc.invalidateQueries({ queryKey: ['stats', 'metrics'] });
  };
  const one = useMutation({
    mutationFn: async (id: string) =>
      (await unwrap(api.POST('/api/admin/dead-letters/{id}/redrive', { params: { path: { id } } }))) as RedriveOne,
    onSuccess: (r) => {
      setResult(
        `Re-drove ${r.id} (${r.event_type}) to ${r.redriven_to.topic} partition ${r.redriven_to.partition}, offset ${r.redriven_to.offset}.`,
      );
      refresh();
    },
  });
  const all = useMutation({
    mutationFn: async () => (await unwrap(api.POST('/api/admin/dead-letters/redrive', { body: {} }))) as RedriveAll,
    onSuccess: (r) => {
      setResult(
        `Re-drove ${formatCount(r.redriven)} dead letters; ${formatCount(r.failed.length)} failed${
          r.failed.length ? ` (${r.failed.map((f) => `${f.id}: ${f.error}`).join('; ')})` : ''
        }; ${formatCount(r.remaining)} remain pending.`,
      );
      refresh();
    },
  });
  const mutationError = one.error ?? all.error;

  if (list.isPending) return <Loading label="Loading dead letters" />;
  if (list.error) return <ErrorState error={list.error} retry={() => void list.refetch()} />;
  const { dead_letters: items, counts, total } = list.data;

  return (
    <Flex direction="column" gap="4">
      <Flex gap="3" wrap="wrap">
        <Box flexGrow="1">
          <Figure label="Pending" value={formatCount(counts.pending)} />
        </Box>
        <Box flexGrow="1">
          <Figure label="Need inspection" value={formatCount(counts.needs_inspection)} hint="5 failures or more" />
        </Box>
        <Box flexGrow="1">
          <Figure label="Re-driven" value={formatCount(counts.redriven)} />
        </Box>
      </Flex>
      <Flex gap="3" align="center" wrap="wrap" justify="between">
        <Flex gap="2" align="center">
          <Text as="label" size="2" htmlFor="dl-status">
            Show
          </Text>
          <Select.Root value={status} onValueChange={setStatus}>
            <Select.Trigger id="dl-status" />
            <Select.Content>
              <Select.Item value="pending">Pending</Select.Item>
              <Select.Item value="redriven">Re-driven</Select.Item>
              <Select.Item value="all">All</Select.Item>
            </Select.Content>
          </Select.Root>
        </Flex>
        <Confirm
          trigger={
            <Button disabled={counts.pending === 0 || all.isPending} loading={all.isPending}>
              <ReloadIcon /> Re-drive all pending
            </Button>
          }
          title="Re-drive every pending dead letter?"
          text={`${formatCount(counts.pending)} pending dead letters will be appended again to their topics, and their projectors will retry them.`}
          onConfirm={() => {
            setResult(null);
            all.mutate();
          }}
        />
      </Flex>
      {result ? (
        <Callout.Root color="green" role="status">
          <Callout.Text>{result}</Callout.Text>
        </Callout.Root>
      ) : null}
      {mutationError ? <ErrorState error={mutationError} /> : null}
      {items.length === 0 ? (
        <Empty title={status === 'redriven' ? 'No re-driven dead letter.' : 'No dead letters.'}>
          {status === 'redriven'
            ? ''
            : 'Every event was applied by its projectors. Events that fail (for example fact extraction while the model is down) wait here for a re-drive.'}
        </Empty>
      ) : (
        <>
          <Text size="1" color="gray">
            {formatCount(items.length)} of {formatCount(total)}, newest first.
          </Text>
          <ScrollTable label="Dead letters">
            <Table.Root size="1" variant="surface">
              <TableCaption>Dead letters</TableCaption>
              <Table.Header>
                <Table.Row>
                  <Table.ColumnHeaderCell>Reason</Table.ColumnHeaderCell>
                  <Table.ColumnHeaderCell>Projector</Table.ColumnHeaderCell>
                  <Table.ColumnHeaderCell>Event</Table.ColumnHeaderCell>
                  <Table.ColumnHeaderCell>Failed</Table.ColumnHeaderCell>
                  <Table.ColumnHeaderCell>Status</Table.ColumnHeaderCell>
                  <Table.ColumnHeaderCell>
                    <VisuallyHidden>Actions</VisuallyHidden>
                  </Table.ColumnHeaderCell>
                </Table.Row>
              </Table.Header>
              <Table.Body>
                {items.map((d: Item) => (
                  <Table.Row key={d.id}>
                    <Table.Cell style={{ maxWidth: 320 }}>
                      {d.error_code ? (
                        <Badge highContrast color="red">
                          {d.error_code}
                        </Badge>
                      ) : null}{' '}
                      <Text as="div" size="2" className="clamp-2" title={d.error}>
                        {d.error}
                      </Text>
                    </Table.Cell>
                    <Table.Cell>
                      {d.group.replace(/^atlas\.projector\./, '')}
                      <Text as="div" size="1" color="gray">
                        <code>{d.group}</code>
                      </Text>
                    </Table.Cell>
                    <Table.Cell>
                      {d.event_type}
                      <Text as="div" size="1" color="gray">
                        {d.topic}/{d.partition}@{d.offset}
                        {d.key ? (
                          <>
                            {' · '}
                            <ChannelLink id={d.key} names={names} />
                          </>
                        ) : null}
                      </Text>
                    </Table.Cell>
                    <Table.Cell>
                      {formatTime(d.failed_at)}
                      <Text as="div" size="1" color="gray">
                        after {d.attempts} {d.attempts === 1 ? 'attempt' : 'attempts'}
                      </Text>
                    </Table.Cell>
                    <Table.Cell>
                      {d.status === 'redriven' ? (
                        <Badge highContrast color="green">
                          re-driven {formatTime(d.redriven_at)}
                        </Badge>
                      ) : d.needs_inspection ? (
                        <Badge highContrast color="red">
                          needs inspection
                        </Badge>
                      ) : (
                        <Badge highContrast color="amber">
                          pending
                        </Badge>
                      )}
                    </Table.Cell>
                    <Table.Cell>
                      <Flex gap="3" align="center">
                        <Details id={d.id} />
                        {d.status === 'pending' && d.redrivable ? (
                          <Confirm
                            trigger={
                              <Button size="1" variant="soft" loading={one.isPending && one.variables === d.id}>
                                Re-drive
                              </Button>
                            }
                            title={`Re-drive ${d.event_type}?`}
                            text={`The original event goes back to ${d.topic} and the ${d.group} projector retries it.`}
                            onConfirm={() => {
                              setResult(null);
                              one.mutate(d.id);
                            }}
                          />
                        ) : null}
                      </Flex>
                    </Table.Cell>
                  </Table.Row>
                ))}
              </Table.Body>
            </Table.Root>
          </ScrollTable>
        </>
      )}
      <Text size="1" color="gray">
        Each item keeps its latest failure time and how many attempts failed.
      </Text>
    </Flex>
  );
};
