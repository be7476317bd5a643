import { TrashIcon } from '@radix-ui/react-icons';
import { AlertDialog, Button, Callout, Card, Flex, Heading, Switch, Text, TextField } from '@radix-ui/themes';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { ApiError, api, unwrap } from '../../api/client';
import { formatCount, useIsAdmin } from '../../api/hooks';
import { ErrorState, QueryView } from '../../components/states';
import { channelKeys } from './keys';

type Settings = {
  sync_enabled: boolean;
  wiki_enabled: boolean;
  graph_enabled: boolean;
  fact_extraction_enabled: boolean;
  retention_days: number | null;
  digest_enabled: boolean;
  digest_days: number;
};
type Flag = Exclude<keyof Settings, 'retention_days' | 'digest_days'>;

/** The switches of the settings form, with what each does (spec "Channel settings"; docs "Edits, deletes, retention"). */
const FLAGS: { key: Flag; label: string; hint: string }[] = [
  { key: 'sync_enabled', label: 'Sync', hint: 'Fetch new messages from the platform.' },
  { key: 'fact_extraction_enabled', label: 'Fact extraction', hint: 'Extract facts from new messages.' },
  { key: 'graph_enabled', label: 'Knowledge graph', hint: 'Add entities and relationships to the graph.' },
  { key: 'wiki_enabled', label: 'Wiki', hint: 'Generate and update the channel wiki.' },
  {
    key: 'digest_enabled',
    label: 'Posted digest',
    hint: 'The bot posts the channel’s digest (decisions, action items, topics) to the channel every period below. Needs a connection.',
  },
];

/** The API's 400 issues (`details.issues`: path and message), when the error carries them. */
const issuesOf = (e: unknown): { path: string; message: string }[] => {
  if (!(e instanceof ApiError)) return [];
  const issues = (e.details as { issues?: unknown } | null)?.issues;
  return Array.isArray(issues)
    ? issues.filter((i): i is { path: string; message: string } => typeof i?.message === 'string')
    : [];
};

/** The settings form: read-only for non-admins; admins save the fields they changed (PUT merges them). */
const SettingsForm = ({ channelId, saved }: { channelId: string; saved: Settings }) => {
  const qc = useQueryClient();
  const isAdmin = useIsAdmin();
  const [draft, setDraft] = useState<Settings>(saved);
  const [retention, setRetention] = useState(saved.retention_days === null ? '' : String(saved.retention_days));
  const [digestDays, setDigestDays] = useState(String(saved.digest_days));
  const retentionId = useId();
  const hintId = useId();
  const digestId = useId();
  const digestHintId = useId();
  const digestDaysValue = Number(digestDays);
  const retentionValue = retention.trim() === '' ? null : Number(retention);
  const changes: Partial<Settings> = {};
  for (const f of FLAGS) if (draft[f.key] !== saved[f.key]) changes[f.key] = draft[f.key];
  if (retentionValue !== saved.retention_days) changes.retention_days = retentionValue;
  if (digestDaysValue !== saved.digest_days) changes.digest_days = digestDaysValue;
  const dirty = Object.keys(changes).length > 0;

  const save = useMutation({
    mutationFn: (body: Partial<Settings>) =>
      unwrap(api.PUT('/api/channels/{channel_id}/settings', { params: { path: { channel_id: channelId } }, body })),
    onSuccess: (next) => {
      qc.setQueryData(channelKeys.settings(channelId), next);
      void qc.invalidateQueries({ queryKey: channelKeys.detail(channelId), exact: true });
      setDraft(next);
      setRetention(next.retention_days === null ? '' : String(next.retention_days));
      setDigestDays(String(next.digest_days));
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (isAdmin && dirty) save.mutate(changes);
  };
  const issues = issuesOf(save.error);

  return (
    <form onSubmit={submit} noValidate aria-label="Channel settings">
      <Flex direction="column" gap="4">
        {!isAdmin ? (
          <Callout.Root color="gray">
            <Callout.Text>Only admins can change a channel's settings; this is how they stand.</Callout.Text>
          </Callout.Root>
        ) : null}
        {FLAGS.map((f) => (
          <Text as="label" key={f.key} size="2">
            <Flex gap="3" align="center">
              <Switch
                checked={draft[f.key]}
                disabled={!isAdmin || save.isPending}
                onCheckedChange={(v) => setDraft((d) => ({ ...d, [f.key]: v }))}
              />
              <Flex direction="column">
                <Text weight="medium">{f.label}</Text>
                <Text color="gray" size="1">
                  {f.hint}
                </Text>
              </Flex>
            </Flex>
          </Text>
        ))}
        <Flex direction="column" gap="1" style={{ maxWidth: 320 }}>
          <Text as="label" htmlFor={retentionId} size="2" weight="medium">
            Retention (days)
          </Text>
          <TextField.Root
            id={retentionId}
            type="number"
            inputMode="numeric"
            placeholder="Keep forever"
            value={retention}
            readOnly={!isAdmin}
            disabled={save.isPending}
            aria-describedby={hintId}
            aria-invalid={issues.some((i) => i.path.includes('retention_days')) || undefined}
            onChange={(e) => setRetention(e.target.value)}
          />
          <Text id={hintId} size="1" color="gray">
            Messages older than this many days are removed (1 to 36,500); empty keeps them forever.
          </Text>
        </Flex>
        <Flex direction="column" gap="1" style={{ maxWidth: 320 }}>
          <Text as="label" htmlFor={digestId} size="2" weight="medium">
            Digest period (days)
          </Text>
          <TextField.Root
            id={digestId}
            type="number"
            inputMode="numeric"
            value={digestDays}
            readOnly={!isAdmin}
            disabled={save.isPending}
            aria-describedby={digestHintId}
            aria-invalid={issues.some((i) => i.path.includes('digest_days')) || undefined}
            onChange={(e) => setDigestDays(e.target.value)}
          />
          <Text id={digestHintId} size="1" color="gray">
            How many days each posted digest covers, and how often it is posted (1 to 31; 7 is weekly).
          </Text>
        </Flex>
        {save.error ? (
          <Flex direction="column" gap="1">
            <ErrorState error={save.error} />
            {issues.length ? (
              <ul aria-label="What the API refused" style={{ margin: 0 }}>
                {issues.map((i) => (
                  <li key={`${i.path}:${i.message}`}>
                    <Text size="2" color="red">
                      {i.path.replace(/^body\./, '')}: {i.message}
                    </Text>
                  </li>
                ))}
              </ul>
            ) : null}
          </Flex>
        ) : save.isSuccess && !dirty ? (
          <Callout.Root color="green" role="status">
            <Callout.Text>Settings saved.</Callout.Text>
          </Callout.Root>
        ) : null}
        {isAdmin ? (
          <Flex gap="3">
            <Button type="submit" disabled={!dirty} loading={save.isPending}>
              Save settings
            </Button>
            <Button
              type="button"
              variant="soft"
              color="gray"
              disabled={!dirty || save.isPending}
              onClick={() => {
                setDraft(saved);
                setRetention(saved.retention_days === null ? '' : String(saved.retention_days));
                setDigestDays(String(saved.digest_days));
                save.reset();
              }}
            >
              Reset
            </Button>
          </Flex>
        ) : null}
      </Flex>
    </form>
  );
};

/**
 * "Delete channel data" (admins; DELETE /api/channels/{channel_id}/data, spec "Channels"): a confirmation dialog that
 * asks for the channel's name; afterwards the counts the API answers. The channel stays, empty, until a sync refills it.
 */
const DeleteData = ({ channelId, channelName }: { channelId: string; channelName: string }) => {
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const confirmId = useId();
  const del = useMutation({
    mutationFn: () =>
      unwrap(api.DELETE('/api/channels/{channel_id}/data', { params: { path: { channel_id: channelId } } })),
    onSuccess: () => {
      // The channel stays, empty: its counts, messages, facts, wiki and graph are read again.
      for (const key of [['channels'], ['stats'], ['channel', channelId], ['wiki', channelId], ['memory']])
        void qc.invalidateQueries({ queryKey: key });
    },
  });
  const done = del.data;
  return (
    <Card>
      <Flex direction="column" gap="3">
        <Heading as="h2" size="4">
          Delete channel data
        </Heading>
        <Text size="2">
          Removes every message, fact, graph entity and wiki page of #{channelName} from Atlas. The platform keeps its
          messages; a later sync brings them back.
        </Text>
        <Flex>
          <AlertDialog.Root
            open={open}
            onOpenChange={(o) => {
              if (del.isPending) return;
              setOpen(o);
              if (!o) {
                setTyped('');
                del.reset();
              }
            }}
          >
            <AlertDialog.Trigger>
              <Button color="red" variant="soft">
                <TrashIcon aria-hidden="true" /> Delete channel data…
              </Button>
            </AlertDialog.Trigger>
            <AlertDialog.Content maxWidth="480px">
              <AlertDialog.Title>Delete the data of #{channelName}?</AlertDialog.Title>
              {done ? (
                <>
                  <AlertDialog.Description size="2">
                    Deleted {formatCount(done.deleted_messages)} messages, {formatCount(done.deleted_facts)} facts,{' '}
                    {formatCount(done.deleted_entities)} entities and {formatCount(done.deleted_wiki_pages)} wiki pages.
                  </AlertDialog.Description>
                  <Flex justify="end" mt="4">
                    <AlertDialog.Cancel>
                      <Button>Close</Button>
                    </AlertDialog.Cancel>
                  </Flex>
                </>
              ) : (
                <form
                  onSubmit={(e) => {
                    e.preventDefault();
                    if (typed === channelName) del.mutate();
                  }}
                >
                  <AlertDialog.Description size="2">
                    This cannot be undone. Type the channel's name, <strong>{channelName}</strong>, to confirm.
                  </AlertDialog.Description>
                  <Flex direction="column" gap="1" mt="3">
                    <Text as="label" htmlFor={confirmId} size="2" weight="medium">
                      Channel name
                    </Text>
                    <TextField.Root
                      id={confirmId}
                      value={typed}
                      autoComplete="off"
                      onChange={(e) => setTyped(e.target.value)}
                    />
                  </Flex>
                  {del.error ? (
                    <Flex mt="3">
                      <ErrorState error={del.error} />
                    </Flex>
                  ) : null}
                  <Flex gap="3" justify="end" mt="4">
                    <AlertDialog.Cancel>
                      <Button variant="soft" color="gray" type="button" disabled={del.isPending}>
                        Cancel
                      </Button>
                    </AlertDialog.Cancel>
                    <Button
                      color="red"
                      highContrast
                      type="submit"
                      disabled={typed !== channelName}
                      loading={del.isPending}
                    >
                      Delete data
                    </Button>
                  </Flex>
                </form>
              )}
            </AlertDialog.Content>
          </AlertDialog.Root>
        </Flex>
      </Flex>
    </Card>
  );
};

/**
 * The channel's settings (spec "Channel settings"; GET and PUT /api/channels/{channel_id}/settings): sync, fact
 * extraction, graph and wiki switches and the retention in days (null keeps messages forever). Admins save the
 * changed fields and see the API's validation errors (400 INVALID_REQUEST with its issues); for others the form is
 * read-only (the server refuses the PUT anyway). Admins also get "Delete channel data".
 */
export const SettingsTab = ({ channelId, channelName }: { channelId: string; channelName: string }) => {
  const isAdmin = useIsAdmin();
  const settings = useQuery({
    queryKey: channelKeys.settings(channelId),
    queryFn: () =>
      unwrap(api.GET('/api/channels/{channel_id}/settings', { params: { path: { channel_id: channelId } } })),
  });
  return (
    <Flex direction="column" gap="5">
      <QueryView query={settings} label="Loading the settings">
        {(s) => <SettingsForm channelId={channelId} saved={s} />}
      </QueryView>
      {isAdmin ? <DeleteData channelId={channelId} channelName={channelName} /> : null}
    </Flex>
  );
};
