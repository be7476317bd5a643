import {
  AlertDialog,
  Badge,
  Box,
  Button,
  Card,
  Flex,
  Grid,
  Heading,
  Link,
  SegmentedControl,
  Select,
  Text,
  TextArea,
} from '@radix-ui/themes';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { formatTime, useChannels } from '../api/hooks';
import type { paths } from '../api/schema';
import { Empty, ErrorState, Loading } from '../components/states';

type Contradiction =
  paths['/api/contradictions']['get']['responses'][200]['content']['application/json']['contradictions'][number];
type Side = Contradiction['earlier'];
type Outcome = 'earlier' | 'later' | 'both';

const OUTCOMES: { outcome: Outcome; label: string; explain: string }[] = [
  {
    outcome: 'earlier',
    label: 'Earlier stands',
    explain: 'The earlier fact stays valid and its flag is cleared; the later one supersedes nothing.',
  },
  {
    outcome: 'later',
    label: 'Later stands',
    explain: 'The earlier fact is superseded by the later one from the time the later one was said.',
  },
  { outcome: 'both', label: 'Both stand', explain: 'Both facts stay valid; the flag is cleared.' },
];

const PAGE_SIZE = 20;

/**
 * The contradiction desk (issue 27, point 5; docs/contradictions.md): potential contradictions of the channels the
 * caller sees (GET /api/contradictions), open or resolved, by channel; both sides side by side with their sources; an
 * admin resolves one (POST /api/contradictions/{id}/resolve) after a confirmation dialog.
 */
export const ContradictionsPage = () => {
  const [status, setStatus] = useState<'open' | 'resolved'>('open');
  const [channel, setChannel] = useState<string>('all');
  const [page, setPage] = useState(1);
  const channels = useChannels();
  const names = new Map((channels.data ?? []).map((c) => [c.id, c.name]));
  const list = useQuery({
    queryKey: ['contradictions', status, channel, page],
    queryFn: () =>
      unwrap(
        api.GET('/api/contradictions', {
          params: {
            query: { status, page, limit: PAGE_SIZE, ...(channel === 'all' ? {} : { channel_id: channel }) },
          },
        }),
      ),
  });
  return (
    <Flex direction="column" gap="4">
      <Heading as="h1" size="6">
        Contradictions
      </Heading>
      <Text color="gray" size="2">
        Facts that may contradict an earlier one on the same topic. Decide which stands; the memories, search, the
        entity cards and the channel's wiki follow.
      </Text>
      <Flex gap="3" wrap="wrap" align="center">
        <SegmentedControl.Root
          value={status}
          onValueChange={(v) => {
            setStatus(v as 'open' | 'resolved');
            setPage(1);
          }}
          aria-label="Status"
        >
          <SegmentedControl.Item value="open">Open</SegmentedControl.Item>
          <SegmentedControl.Item value="resolved">Resolved</SegmentedControl.Item>
        </SegmentedControl.Root>
        <Select.Root
          value={channel}
          onValueChange={(v) => {
            setChannel(v);
            setPage(1);
          }}
        >
          <Select.Trigger aria-label="Channel" />
          <Select.Content>
            <Select.Item value="all">All channels</Select.Item>
            {(channels.data ?? []).map((c) => (
              <Select.Item key={c.id} value={c.id}>
                #{c.name}
              </Select.Item>
            ))}
          </Select.Content>
        </Select.Root>
        {list.data ? (
          <Text size="2" color="gray" aria-live="polite">
            {list.data.total} {status}
          </Text>
        ) : null}
      </Flex>
      {list.isPending ? (
        <Loading label="Loading contradictions" lines={4} />
      ) : list.error ? (
        <ErrorState error={list.error} retry={() => void list.refetch()} />
      ) : list.data.contradictions.length === 0 ? (
        <Empty title={status === 'open' ? 'No open contradictions.' : 'Nothing resolved yet.'}>
          {status === 'open'
            ? 'Atlas flags a fact when a later one on the same topic may contradict it.'
            : 'Resolved contradictions show here with who decided and when.'}
        </Empty>
      ) : (
        <Flex direction="column" gap="3" asChild>
          <ul aria-label="Contradictions" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
            {list.data.contradictions.map((c) => (
              <li key={c.id}>
                <ContradictionCard c={c} channelName={names.get(c.channel_id) ?? c.channel_id} />
              </li>
            ))}
          </ul>
        </Flex>
      )}
      {list.data && list.data.pages > 1 ? (
        <Flex gap="3" align="center">
          <Button variant="soft" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Previous
          </Button>
          <Text size="2">
            Page {page} of {list.data.pages}
          </Text>
          <Button variant="soft" disabled={page >= list.data.pages} onClick={() => setPage(page + 1)}>
            Next
          </Button>
        </Flex>
      ) : null}
    </Flex>
  );
};

/** One contradiction: the two sides side by side, the reason, and the resolution or the buttons that make one. */
const ContradictionCard = ({ c, channelName }: { c: Contradiction; channelName: string }) => (
  <Card>
    <Flex direction="column" gap="3">
      <Flex gap="2" align="center" wrap="wrap">
        <Badge color={c.status === 'open' ? 'amber' : 'green'}>{c.status}</Badge>
        <Text size="2" color="gray">
          #{channelName} · {c.reason} · {formatTime(c.detected_at)}
        </Text>
      </Flex>
      <Grid columns={{ initial: '1', sm: '2' }} gap="3">
        <SideView title="Earlier" side={c.earlier} />
        <SideView title="Later" side={c.later} />
      </Grid>
      {c.resolution ? (
        <Text size="2">
          Resolved: <strong>{OUTCOMES.find((o) => o.outcome === c.resolution!.outcome)?.label}</strong> by{' '}
          {c.resolution.resolved_by} on {formatTime(c.resolution.resolved_at)}
          {c.resolution.note ? ` — ${c.resolution.note}` : ''}
        </Text>
      ) : (
        <Flex gap="2" wrap="wrap">
          {OUTCOMES.map((o) => (
            <Resolve key={o.outcome} c={c} outcome={o.outcome} label={o.label} explain={o.explain} />
          ))}
        </Flex>
      )}
    </Flex>
  </Card>
);

const SideView = ({ title, side }: { title: string; side: Side }) => (
  <Box asChild>
    <section aria-label={`${title} fact`}>
      <Text as="div" size="1" weight="bold" color="gray">
        {title} · {side.fact_type.replace('_', ' ')}
      </Text>
      <Text as="p" size="3" my="1">
        {side.memory_text}
      </Text>
      <Text as="div" size="1" color="gray">
        {side.author_name} · {formatTime(side.message_ts)} ·{' '}
        <Link href={side.permalink} target="_blank" rel="noreferrer">
          source message
        </Link>
      </Text>
    </section>
  </Box>
);

/** A resolve button: a confirmation dialog with an optional note, then POST …/resolve; the lists refresh. */
const Resolve = ({
  c,
  outcome,
  label,
  explain,
}: {
  c: Contradiction;
  outcome: Outcome;
  label: string;
  explain: string;
}) => {
  const qc = useQueryClient();
  const [note, setNote] = useState('');
  const [open, setOpen] = useState(false);
  const resolve = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/contradictions/{contradiction_id}/resolve', {
          params: { path: { contradiction_id: c.id } },
          body: { outcome, ...(note.trim() ? { note: note.trim() } : {}) },
        }),
      ),
    onSuccess: () => {
      setOpen(false);
      void qc.invalidateQueries({ queryKey: ['contradictions'] });
    },
  });
  return (
    <AlertDialog.Root
      open={open}
      onOpenChange={(o) => {
        setOpen(o);
        resolve.reset();
      }}
    >
      <AlertDialog.Trigger>
        <Button variant={outcome === 'both' ? 'outline' : 'soft'}>{label}</Button>
      </AlertDialog.Trigger>
      <AlertDialog.Content maxWidth="520px">
        <AlertDialog.Title>{label}?</AlertDialog.Title>
        <AlertDialog.Description size="2">
          {explain} This is recorded and cannot be changed here.
        </AlertDialog.Description>
        <Box mt="3">
          <Text as="label" size="2" weight="bold" htmlFor={`note-${c.id}-${outcome}`}>
            Note (optional)
          </Text>
          <TextArea
            id={`note-${c.id}-${outcome}`}
            value={note}
            maxLength={2000}
            onChange={(e) => setNote(e.target.value)}
          />
        </Box>
        {resolve.error ? (
          <Box mt="3">
            <ErrorState error={resolve.error} />
          </Box>
        ) : null}
        <Flex gap="3" mt="4" justify="end">
          <AlertDialog.Cancel>
            <Button variant="soft" color="gray">
              Cancel
            </Button>
          </AlertDialog.Cancel>
          <Button onClick={() => resolve.mutate()} loading={resolve.isPending}>
            Confirm: {label.toLowerCase()}
          </Button>
        </Flex>
      </AlertDialog.Content>
    </AlertDialog.Root>
  );
};
