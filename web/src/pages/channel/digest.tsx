import { CopyIcon } from '@radix-ui/react-icons';
import { Badge, Box, Button, Card, Flex, Heading, Link as RLink, Select, Text, TextField } from '@radix-ui/themes';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';
import { safeHref } from '../../components/citation';
import { STATE_COLOR } from '../../components/lifecycle';
import { Empty, ErrorState, Loading } from '../../components/states';
import { channelKeys } from './keys';

type Digest = paths['/api/channels/{channel_id}/digest']['get']['responses'][200]['content']['application/json'];
type Entry = Digest['decisions']['made'][number];

const DAY_MS = 86_400_000;
const PERIODS = [7, 14, 30] as const;

/** The UTC day (YYYY-MM-DD) after the one `iso` falls on: a period ending there holds that whole day. */
const dayAfter = (iso: string): string => new Date(Date.parse(iso.slice(0, 10)) + DAY_MS).toISOString().slice(0, 10);

/** One line: the item, its move in the period (previous → state), owner, due date and its `[n]` source. */
const EntryLine = ({ e, digest }: { e: Entry; digest: Digest }) => {
  const c = digest.citations.find((x) => x.id === e.citation);
  const href = safeHref(c?.permalink);
  return (
    <li>
      <Flex gap="2" align="baseline" wrap="wrap">
        <Text size="2">{e.title}</Text>
        <Badge highContrast color={STATE_COLOR[e.state] ?? 'gray'}>
          {e.previous_state && e.previous_state !== e.state ? `${e.previous_state} → ${e.state}` : e.state}
        </Badge>
        {e.owner ? (
          <Text size="1" color="gray">
            {e.owner}
          </Text>
        ) : null}
        {e.due_date ? (
          <Text size="1" color="gray">
            due {e.due_date}
          </Text>
        ) : null}
        {href ? (
          <RLink href={href} target="_blank" rel="noreferrer noopener" size="2" title={c?.excerpt}>
            [{e.citation}]
          </RLink>
        ) : (
          <Text size="2">[{e.citation}]</Text>
        )}
      </Flex>
    </li>
  );
};

const Section = ({ title, entries, digest }: { title: string; entries: Entry[]; digest: Digest }) =>
  entries.length ? (
    <section aria-label={title}>
      <Heading as="h3" size="3" mb="1">
        {title} ({entries.length})
      </Heading>
      <ul className="plain-list">
        {entries.map((e) => (
          <EntryLine key={`${e.item_id}-${e.at}`} e={e} digest={digest} />
        ))}
      </ul>
    </section>
  ) : null;

/**
 * A channel's digest (GET /api/channels/{channel_id}/digest, docs/digests.md): the period (its last day and length
 * in the URL, `digest_end` and `digest_days`; by default the week that ends with the channel's newest message),
 * decisions made and changed, action items opened, closed, overdue and due, new and growing topics, each line with its
 * numbered source, and the sources; "Copy as Markdown" copies the text the bot posts.
 */
export const DigestTab = ({ channelId, newest }: { channelId: string; newest: string | null }) => {
  const [params, setParams] = useSearchParams();
  const endId = useId();
  const [copied, setCopied] = useState(false);
  const last = params.get('digest_end') ?? (newest ? newest.slice(0, 10) : new Date().toISOString().slice(0, 10));
  const days = Number(params.get('digest_days') ?? 7);
  const end = `${dayAfter(`${last}T00:00:00Z`)}T00:00:00.000Z`;
  const digest = useQuery({
    queryKey: [...channelKeys.detail(channelId), 'digest', end, days],
    queryFn: () =>
      unwrap(
        api.GET('/api/channels/{channel_id}/digest', {
          params: { path: { channel_id: channelId }, query: { end, days } },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const set = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    next.set(name, value);
    setParams(next, { replace: true });
  };

  return (
    <Flex direction="column" gap="4">
      <Flex gap="3" align="end" wrap="wrap">
        <Flex direction="column" gap="1">
          <Text as="label" size="1" weight="medium" htmlFor={endId}>
            Last day
          </Text>
          <TextField.Root
            id={endId}
            type="date"
            value={last}
            onChange={(e) => e.target.value && set('digest_end', e.target.value)}
          />
        </Flex>
        <Flex direction="column" gap="1">
          <Text size="1" weight="medium" id={`${endId}-days`}>
            Period
          </Text>
          <Select.Root value={String(days)} onValueChange={(v) => set('digest_days', v)}>
            <Select.Trigger aria-labelledby={`${endId}-days`} />
            <Select.Content>
              {PERIODS.map((d) => (
                <Select.Item key={d} value={String(d)}>
                  {d} days
                </Select.Item>
              ))}
            </Select.Content>
          </Select.Root>
        </Flex>
        {digest.data?.has_activity ? (
          <Button
            variant="soft"
            onClick={() => void navigator.clipboard?.writeText(digest.data.text).then(() => setCopied(true))}
          >
            <CopyIcon /> {copied ? 'Copied' : 'Copy as Markdown'}
          </Button>
        ) : null}
      </Flex>
      {digest.isPending ? <Loading label="Loading the digest" /> : null}
      {digest.error ? <ErrorState error={digest.error} retry={() => void digest.refetch()} /> : null}
      {digest.data ? (
        <Card size="2" data-testid="digest">
          <Flex direction="column" gap="3">
            <Heading as="h2" size="4">
              {digest.data.period.start.slice(0, 10)} to{' '}
              {new Date(Date.parse(digest.data.period.end) - 1).toISOString().slice(0, 10)}
            </Heading>
            {!digest.data.has_activity ? (
              <Empty title="A quiet period.">No decision, action item or new topic in these days.</Empty>
            ) : (
              <>
                <Section title="Decisions made" entries={digest.data.decisions.made} digest={digest.data} />
                <Section title="Decisions changed" entries={digest.data.decisions.changed} digest={digest.data} />
                <Section title="Action items opened" entries={digest.data.action_items.opened} digest={digest.data} />
                <Section title="Action items closed" entries={digest.data.action_items.closed} digest={digest.data} />
                <Section title="Action items overdue" entries={digest.data.action_items.overdue} digest={digest.data} />
                <Section title="Action items due soon" entries={digest.data.action_items.due} digest={digest.data} />
                {digest.data.topics.new.length ? (
                  <section aria-label="New topics">
                    <Heading as="h3" size="3" mb="1">
                      New topics
                    </Heading>
                    <Flex gap="2" wrap="wrap">
                      {digest.data.topics.new.map((t) => (
                        <Badge key={t.topic} variant="soft">
                          {t.topic} · {t.fact_count}
                        </Badge>
                      ))}
                    </Flex>
                  </section>
                ) : null}
                {digest.data.topics.growing.length ? (
                  <section aria-label="Growing topics">
                    <Heading as="h3" size="3" mb="1">
                      Growing topics
                    </Heading>
                    <Flex gap="2" wrap="wrap">
                      {digest.data.topics.growing.map((t) => (
                        <Badge key={t.topic} variant="soft" color="green">
                          {t.topic} · {t.previous_count} → {t.fact_count}
                        </Badge>
                      ))}
                    </Flex>
                  </section>
                ) : null}
                {digest.data.citations.length ? (
                  <details>
                    <summary>
                      <Text size="2" weight="medium">
                        Sources ({digest.data.citations.length})
                      </Text>
                    </summary>
                    <Box asChild mt="2">
                      <ol className="plain-list">
                        {digest.data.citations.map((c) => (
                          <li key={c.id}>
                            <Text size="2">
                              [{c.id}] {c.author}, {c.timestamp.slice(0, 10)}: {c.excerpt}{' '}
                            </Text>
                            {safeHref(c.permalink) ? (
                              <RLink href={safeHref(c.permalink)} target="_blank" rel="noreferrer noopener" size="2">
                                open the message
                              </RLink>
                            ) : null}
                          </li>
                        ))}
                      </ol>
                    </Box>
                  </details>
                ) : null}
              </>
            )}
          </Flex>
        </Card>
      ) : null}
    </Flex>
  );
};
