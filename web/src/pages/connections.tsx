import { ArrowLeftIcon, LockClosedIcon, PlusIcon } from '@radix-ui/react-icons';
import {
  AlertDialog,
  Box,
  Button,
  Callout,
  Card,
  DataList,
  Dialog,
  Flex,
  Grid,
  Heading,
  RadioCards,
  Link as RLink,
  Select,
  Switch,
  Table,
  Tabs,
  Text,
  TextField,
} from '@radix-ui/themes';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { ApiError, api, unwrap } from '../api/client';
import { formatCount, formatTime, useMe } from '../api/hooks';
import { Empty, ErrorState, Loading, QueryView } from '../components/states';
import { ChannelPicker, useConnectionChannels } from './connections/channel-picker';
import { PLATFORMS, type Platform, PlatformBadge, ScopesToGrant, StatusBadge } from './connections/platforms';
import { ScheduleEditor, SyncPanel } from './connections/sync-panel';
import { SaveError, type ValidateAnswer, ValidateOutcome } from './connections/validation';

export { ScheduleEditor, SyncPanel };

/** What a stored secret shows instead of its value: the API never returns credentials (spec "Connection"). */
const MASK = '••••••••';

/** Gates a screen to admins (GET /api/me role); others see why (the API answers them 403 anyway). */
const AdminOnly = ({ children }: { children: React.ReactNode }) => {
  const me = useMe();
  if (me.isPending) return <Loading label="Checking access" />;
  if (me.data?.role !== 'admin')
    return (
      <Flex direction="column" gap="4">
        <Heading as="h1" size="7">
          Connections
        </Heading>
        <Callout.Root color="amber" highContrast role="alert">
          <Callout.Icon>
            <LockClosedIcon />
          </Callout.Icon>
          <Callout.Text>
            Admins only: connections hold platform credentials, so only an admin key can see or change them. Ask an
            admin, or sign in with an admin key.
          </Callout.Text>
        </Callout.Root>
      </Flex>
    );
  return <>{children}</>;
};

/** The connections (GET /api/connections). */
const useConnections = () =>
  useQuery({ queryKey: ['connections'], queryFn: () => unwrap(api.GET('/api/connections')) });

/**
 * Connections (issue 26 point 7; spec "Connections", "Connection", "Connection status"), admins only: every connection
 * with its platform, status, channel count and last sync, each opening its page; "New connection" (the `new` query
 * parameter; shown at once when there is none) opens the form.
 */
export const ConnectionsPage = () => (
  <AdminOnly>
    <ConnectionList />
  </AdminOnly>
);

const ConnectionList = () => {
  const list = useConnections();
  const [params, setParams] = useSearchParams();
  const creating = params.has('new');
  return (
    <Flex direction="column" gap="5">
      <Flex justify="between" align="center" gap="3" wrap="wrap">
        <Heading as="h1" size="7">
          Connections
        </Heading>
        {!creating && list.data?.length ? (
          <Button onClick={() => setParams({ new: '' })}>
            <PlusIcon aria-hidden /> New connection
          </Button>
        ) : null}
      </Flex>
      <Text color="gray" size="2">
        A connection is a Slack-like workspace or a Discord-like guild Atlas reads with a bot. Pick its channels, sync
        them now or on a schedule.
      </Text>
      <QueryView query={list} label="Loading connections">
        {(rows) => (
          <>
            {creating || rows.length === 0 ? (
              <NewConnectionForm first={rows.length === 0} onCancel={rows.length ? () => setParams({}) : undefined} />
            ) : null}
            {rows.length ? (
              <section aria-label="Connections">
                <Table.Root variant="surface" size="2">
                  <Table.Header>
                    <Table.Row>
                      <Table.ColumnHeaderCell>Name</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell>Platform</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell>Status</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell justify="end">Channels</Table.ColumnHeaderCell>
                      <Table.ColumnHeaderCell>Last sync</Table.ColumnHeaderCell>
                    </Table.Row>
                  </Table.Header>
                  <Table.Body>
                    {rows.map((c) => (
                      <Table.Row key={c.id}>
                        <Table.RowHeaderCell>
                          <RLink asChild>
                            <Link to={`/connections/${encodeURIComponent(c.id)}`}>{c.name}</Link>
                          </RLink>
                        </Table.RowHeaderCell>
                        <Table.Cell>
                          <PlatformBadge platform={c.platform} />
                        </Table.Cell>
                        <Table.Cell>
                          <StatusBadge status={c.status} />
                        </Table.Cell>
                        <Table.Cell justify="end">{formatCount(c.channel_count)}</Table.Cell>
                        <Table.Cell>{c.last_sync ? formatTime(c.last_sync) : 'never'}</Table.Cell>
                      </Table.Row>
                    ))}
                  </Table.Body>
                </Table.Root>
              </section>
            ) : null}
          </>
        )}
      </QueryView>
    </Flex>
  );
};

/** The credentials of a form's secret and id fields for `platform` (only those filled in). */
const credentialsOf = (form: HTMLFormElement, platform: Platform): Record<string, string> => {
  const data = new FormData(form);
  const out: Record<string, string> = {};
  for (const f of PLATFORMS[platform].fields) {
    const v = String(data.get(f.name) ?? '').trim();
    if (v) out[f.name] = v;
  }
  return out;
};

/** The credential inputs of a platform: secrets as password inputs, never pre-filled (uncontrolled, not echoed). */
const CredentialFields = ({ platform, stored }: { platform: Platform; stored?: boolean }) => {
  const id = useId();
  return (
    <>
      {PLATFORMS[platform].fields.map((f) => (
        <Box key={f.name}>
          <Text as="label" size="2" weight="medium" htmlFor={`${id}-${f.name}`}>
            {f.label}
          </Text>
          <TextField.Root
            id={`${id}-${f.name}`}
            name={f.name}
            type={f.secret ? 'password' : 'text'}
            autoComplete={f.secret ? 'new-password' : 'off'}
            spellCheck={false}
            required={!stored}
            placeholder={stored ? `${MASK} stored; leave empty to keep` : undefined}
            aria-describedby={`${id}-${f.name}-hint`}
            mt="1"
          />
          <Text id={`${id}-${f.name}-hint`} size="1" color="gray">
            {f.hint}
          </Text>
        </Box>
      ))}
    </>
  );
};

/**
 * The new-connection form: platform choice, the exact scopes to grant there, a name and the credentials (secrets as
 * password inputs). "Validate and connect" posts POST /api/connections, which checks the credentials with the
 * platform before anything is saved: a refusal shows the spec's code, message and missing scopes (docs/connections.md:
 * details.validation_error) and nothing is stored; success opens the connection's channel picker.
 */
const NewConnectionForm = ({ first, onCancel }: { first: boolean; onCancel?: (() => void) | undefined }) => {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [platform, setPlatform] = useState<Platform>('platform_a');
  const [name, setName] = useState('');
  const nameId = useId();
  const create = useMutation({
    mutationFn: (credentials: Record<string, string>) =>
      unwrap(api.POST('/api/connections', { body: { platform, name: name.trim(), credentials } })),
    onSuccess: (c) => {
      void qc.invalidateQueries({ queryKey: ['connections'] });
      navigate(`/connections/${encodeURIComponent(c.id)}?tab=channels`, { state: { created: true } });
    },
  });
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    create.mutate(credentialsOf(e.currentTarget, platform));
  };
  return (
    <Card size="3">
      <form onSubmit={submit} aria-label="New connection" autoComplete="off">
        <Flex direction="column" gap="4">
          <Heading as="h2" size="5">
            {first ? 'Connect a platform' : 'New connection'}
          </Heading>
          <Box>
            <Text as="div" size="2" weight="medium" mb="2" id={`${nameId}-platform`}>
              Platform
            </Text>
            <RadioCards.Root
              value={platform}
              onValueChange={(v) => {
                setPlatform(v as Platform);
                create.reset();
              }}
              columns={{ initial: '1', sm: '2' }}
              aria-labelledby={`${nameId}-platform`}
            >
              {(Object.keys(PLATFORMS) as Platform[]).map((p) => (
                <RadioCards.Item key={p} value={p}>
                  <Flex direction="column">
                    <Text weight="bold">{PLATFORMS[p].label}</Text>
                    <Text size="1" color="gray">
                      {p}
                    </Text>
                  </Flex>
                </RadioCards.Item>
              ))}
            </RadioCards.Root>
          </Box>
          <Grid columns={{ initial: '1', md: '2' }} gap="5">
            <Flex direction="column" gap="3">
              <Box>
                <Text as="label" size="2" weight="medium" htmlFor={nameId}>
                  Name
                </Text>
                <TextField.Root
                  id={nameId}
                  value={name}
                  required
                  maxLength={200}
                  placeholder={`e.g. our ${PLATFORMS[platform].kind}`}
                  onChange={(e) => setName(e.target.value)}
                  mt="1"
                />
              </Box>
              {/* A new set of inputs per platform: nothing typed for one platform is sent for the other. */}
              <CredentialFields key={platform} platform={platform} />
              <Text size="1" color="gray">
                Credentials are checked with the platform before anything is saved, stored encrypted, and never shown
                again.
              </Text>
            </Flex>
            <ScopesToGrant platform={platform} />
          </Grid>
          {create.error ? <SaveError error={create.error} /> : null}
          <Flex gap="3" wrap="wrap">
            <Button type="submit" loading={create.isPending}>
              Validate and connect
            </Button>
            {onCancel ? (
              <Button type="button" variant="soft" color="gray" onClick={onCancel}>
                Cancel
              </Button>
            ) : null}
          </Flex>
        </Flex>
      </form>
    </Card>
  );
};

/**
 * One connection (issue 26 point 7; spec "Connections", "Connection status", "Sync", "Sync schedule"), admins only:
 * its platform, status, times and settings with the credentials masked (the API never returns them); validate (POST
 * /api/connections/{id}/validate: the spec's error code, message and missing scopes), edit (PUT: name, new
 * credentials validated again, settings) and delete (DELETE after a confirmation); tabs (`tab` query parameter) for
 * the channel picker and for sync: a selected channel (`channel` parameter) with its SyncPanel and ScheduleEditor.
 */
export const ConnectionPage = () => (
  <AdminOnly>
    <ConnectionDetail />
  </AdminOnly>
);

const ConnectionDetail = () => {
  const { connectionId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const tab = params.get('tab') === 'sync' ? 'sync' : 'channels';
  const qc = useQueryClient();
  const conn = useQuery({
    queryKey: ['connections', connectionId],
    queryFn: () =>
      unwrap(api.GET('/api/connections/{connection_id}', { params: { path: { connection_id: connectionId } } })),
    retry: (n, e) => !(e instanceof ApiError && e.status === 404) && n < 2,
  });
  const validate = useMutation({
    mutationFn: async () =>
      (await unwrap(
        api.POST('/api/connections/{connection_id}/validate', { params: { path: { connection_id: connectionId } } }),
      )) as ValidateAnswer,
    onSettled: () => void qc.invalidateQueries({ queryKey: ['connections'] }),
  });

  const back = (
    <RLink asChild size="2">
      <Link to="/connections">
        <ArrowLeftIcon aria-hidden /> All connections
      </Link>
    </RLink>
  );
  if (conn.isPending) return <Loading label="Loading the connection" />;
  if (conn.error instanceof ApiError && conn.error.status === 404)
    return (
      <Flex direction="column" gap="3">
        {back}
        <Empty title="There is no such connection.">It may have been deleted.</Empty>
      </Flex>
    );
  if (conn.error) return <ErrorState error={conn.error} retry={() => void conn.refetch()} />;
  const c = conn.data;
  const platform = c.platform as Platform;
  const setTab = (t: string) => setParams(t === 'channels' ? {} : { tab: t }, { replace: true });

  return (
    <Flex direction="column" gap="4">
      {back}
      <Flex justify="between" align="center" gap="3" wrap="wrap">
        <Flex align="center" gap="3" wrap="wrap">
          <Heading as="h1" size="7">
            {c.name}
          </Heading>
          <PlatformBadge platform={c.platform} />
          <StatusBadge status={c.status} />
        </Flex>
        <Flex gap="2" wrap="wrap">
          <Button variant="soft" onClick={() => validate.mutate()} loading={validate.isPending}>
            Validate
          </Button>
          <EditConnection connection={c} />
          <DeleteConnection id={c.id} name={c.name} />
        </Flex>
      </Flex>
      {validate.error ? <ErrorState error={validate.error} /> : null}
      {validate.data ? <ValidateOutcome answer={validate.data} /> : null}
      <Card>
        <DataList.Root orientation={{ initial: 'vertical', sm: 'horizontal' }} size="2">
          <DataList.Item>
            <DataList.Label>Credentials</DataList.Label>
            <DataList.Value>
              <Flex direction="column">
                {PLATFORMS[platform]?.fields.map((f) => (
                  <Text key={f.name}>
                    {f.label}: {MASK}
                  </Text>
                ))}
                <Text color="gray" size="1">
                  stored encrypted, never shown
                </Text>
              </Flex>
            </DataList.Value>
          </DataList.Item>
          <DataList.Item>
            <DataList.Label>Channels syncing</DataList.Label>
            <DataList.Value>{formatCount(c.channel_count)}</DataList.Value>
          </DataList.Item>
          <DataList.Item>
            <DataList.Label>Last sync</DataList.Label>
            <DataList.Value>{c.last_sync ? formatTime(c.last_sync) : 'never'}</DataList.Value>
          </DataList.Item>
          <DataList.Item>
            <DataList.Label>Validated</DataList.Label>
            <DataList.Value>
              {formatTime(c.validated_at)} (created {formatTime(c.created_at)})
            </DataList.Value>
          </DataList.Item>
          <DataList.Item>
            <DataList.Label>Settings</DataList.Label>
            <DataList.Value>
              every {c.settings.sync_interval_minutes} min · wiki {c.settings.wiki_enabled ? 'on' : 'off'} · graph{' '}
              {c.settings.graph_enabled ? 'on' : 'off'}
            </DataList.Value>
          </DataList.Item>
        </DataList.Root>
      </Card>
      <Tabs.Root value={tab} onValueChange={setTab}>
        <Tabs.List aria-label="Connection sections">
          <Tabs.Trigger value="channels">Channels</Tabs.Trigger>
          <Tabs.Trigger value="sync">Sync and schedule</Tabs.Trigger>
        </Tabs.List>
        <Box pt="4">
          <Tabs.Content value="channels">
            <ChannelPicker connectionId={c.id} />
          </Tabs.Content>
          <Tabs.Content value="sync">
            <SyncTab connectionId={c.id} goToChannels={() => setTab('channels')} />
          </Tabs.Content>
        </Box>
      </Tabs.Root>
    </Flex>
  );
};

/** The sync tab: a selected channel of the connection (the `channel` parameter), its sync and its schedule. */
const SyncTab = ({ connectionId, goToChannels }: { connectionId: string; goToChannels: () => void }) => {
  const channels = useConnectionChannels(connectionId);
  const [params, setParams] = useSearchParams();
  const selectId = useId();
  return (
    <QueryView query={channels} label="Loading the selected channels">
      {(list) => {
        const selected = list.filter((ch) => ch.sync_enabled);
        if (selected.length === 0)
          return (
            <Empty title="No channel is selected for sync.">
              <Button variant="ghost" size="1" onClick={goToChannels}>
                Pick channels
              </Button>
            </Empty>
          );
        const asked = params.get('channel');
        const current = selected.find((ch) => ch.id === asked) ?? selected[0]!;
        return (
          <Flex direction="column" gap="4">
            <Flex gap="2" align="center" wrap="wrap">
              <Text as="label" size="2" weight="medium" id={selectId}>
                Channel
              </Text>
              <Select.Root
                value={current.id}
                onValueChange={(v) =>
                  setParams(
                    (p) => {
                      const n = new URLSearchParams(p);
                      n.set('channel', v);
                      return n;
                    },
                    { replace: true },
                  )
                }
              >
                <Select.Trigger aria-labelledby={selectId} />
                <Select.Content>
                  {selected.map((ch) => (
                    <Select.Item key={ch.id} value={ch.id}>
                      {ch.name}
                    </Select.Item>
                  ))}
                </Select.Content>
              </Select.Root>
              <RLink asChild size="2">
                <Link to={`/channels/${encodeURIComponent(current.id)}`}>Open the channel</Link>
              </RLink>
            </Flex>
            <Grid columns={{ initial: '1', lg: '3' }} gap="4" align="start">
              <Box gridColumn={{ initial: '1', lg: '1 / span 2' }} minWidth="0">
                <SyncPanel key={current.id} channelId={current.id} />
              </Box>
              <ScheduleEditor channelId={current.id} />
            </Grid>
          </Flex>
        );
      }}
    </QueryView>
  );
};

interface ConnectionDetailData {
  id: string;
  name: string;
  platform: string;
  settings: { sync_interval_minutes: number; wiki_enabled: boolean; graph_enabled: boolean };
}

/**
 * Edit a connection (PUT /api/connections/{id}): name, settings, and new credentials (all of the platform's fields, or
 * none to keep the stored ones; the stored ones are never shown). New credentials are validated again: a refusal shows
 * the spec's code and missing scopes and saves nothing.
 */
const EditConnection = ({ connection: c }: { connection: ConnectionDetailData }) => {
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState(c.name);
  const [interval, setMinutes] = useState(String(c.settings.sync_interval_minutes));
  const [wiki, setWiki] = useState(c.settings.wiki_enabled);
  const [graph, setGraph] = useState(c.settings.graph_enabled);
  const id = useId();
  const platform = c.platform as Platform;
  const update = useMutation({
    mutationFn: (body: {
      name?: string;
      credentials?: Record<string, string>;
      settings?: { sync_interval_minutes?: number; wiki_enabled?: boolean; graph_enabled?: boolean };
    }) => unwrap(api.PUT('/api/connections/{connection_id}', { params: { path: { connection_id: c.id } }, body })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ['connections'] });
      setOpen(false);
    },
  });
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const credentials = credentialsOf(e.currentTarget, platform);
    const minutes = Number(interval);
    update.mutate({
      name: name.trim(),
      ...(Object.keys(credentials).length ? { credentials } : {}),
      settings: {
        ...(Number.isInteger(minutes) && minutes > 0 ? { sync_interval_minutes: minutes } : {}),
        wiki_enabled: wiki,
        graph_enabled: graph,
      },
    });
  };
  return (
    <Dialog.Root
      open={open}
      onOpenChange={(o) => {
        setOpen(o);
        if (o) {
          setName(c.name);
          setMinutes(String(c.settings.sync_interval_minutes));
          setWiki(c.settings.wiki_enabled);
          setGraph(c.settings.graph_enabled);
          update.reset();
        }
      }}
    >
      <Dialog.Trigger>
        <Button variant="soft">Edit</Button>
      </Dialog.Trigger>
      <Dialog.Content maxWidth="520px">
        <Dialog.Title>Edit {c.name}</Dialog.Title>
        <Dialog.Description size="2" color="gray">
          Leave the credentials empty to keep the stored ones; new ones are validated before they are saved.
        </Dialog.Description>
        <form onSubmit={submit} autoComplete="off">
          <Flex direction="column" gap="3" mt="3">
            <Box>
              <Text as="label" size="2" weight="medium" htmlFor={`${id}-name`}>
                Name
              </Text>
              <TextField.Root
                id={`${id}-name`}
                value={name}
                required
                maxLength={200}
                onChange={(e) => setName(e.target.value)}
                mt="1"
              />
            </Box>
            <CredentialFields platform={platform} stored />
            <Box>
              <Text as="label" size="2" weight="medium" htmlFor={`${id}-interval`}>
                Sync interval (minutes)
              </Text>
              <TextField.Root
                id={`${id}-interval`}
                type="number"
                min={1}
                max={10080}
                value={interval}
                onChange={(e) => setMinutes(e.target.value)}
                mt="1"
              />
            </Box>
            <Flex gap="4" wrap="wrap">
              <Text as="label" size="2">
                <Flex gap="2" align="center">
                  <Switch checked={wiki} onCheckedChange={setWiki} /> Wiki
                </Flex>
              </Text>
              <Text as="label" size="2">
                <Flex gap="2" align="center">
                  <Switch checked={graph} onCheckedChange={setGraph} /> Graph
                </Flex>
              </Text>
            </Flex>
            {update.error ? <SaveError error={update.error} /> : null}
            <Flex gap="3" justify="end">
              <Dialog.Close>
                <Button type="button" variant="soft" color="gray">
                  Cancel
                </Button>
              </Dialog.Close>
              <Button type="submit" loading={update.isPending}>
                Save
              </Button>
            </Flex>
          </Flex>
        </form>
      </Dialog.Content>
    </Dialog.Root>
  );
};

/** Delete a connection (DELETE /api/connections/{id}, 204) after a confirmation dialog; then back to the list. */
const DeleteConnection = ({ id, name }: { id: string; name: string }) => {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const del = useMutation({
    mutationFn: async () => {
      const r = await api.DELETE('/api/connections/{connection_id}', { params: { path: { connection_id: id } } });
      if (!r.response.ok) await unwrap(Promise.resolve(r));
    },
    onSuccess: () => {
      qc.removeQueries({ queryKey: ['connections', id] });
      void qc.invalidateQueries({ queryKey: ['connections'] });
      navigate('/connections');
    },
  });
  return (
    <AlertDialog.Root onOpenChange={() => del.reset()}>
      <AlertDialog.Trigger>
        <Button color="red" variant="soft">
          Delete
        </Button>
      </AlertDialog.Trigger>
      <AlertDialog.Content maxWidth="460px">
        <AlertDialog.Title>Delete {name}?</AlertDialog.Title>
        <AlertDialog.Description size="2">
          Its stored credentials are destroyed and its channels stop syncing from it. This cannot be undone.
        </AlertDialog.Description>
        {del.error ? (
          <Box mt="3">
            <ErrorState error={del.error} />
          </Box>
        ) : null}
        <Flex gap="3" mt="4" justify="end">
          <AlertDialog.Cancel>
            <Button variant="soft" color="gray">
              Keep it
            </Button>
          </AlertDialog.Cancel>
          <Button color="red" highContrast onClick={() => del.mutate()} loading={del.isPending}>
            Delete connection
          </Button>
        </Flex>
      </AlertDialog.Content>
    </AlertDialog.Root>
  );
};
