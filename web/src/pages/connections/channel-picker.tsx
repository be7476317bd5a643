import { MagnifyingGlassIcon } from '@radix-ui/react-icons';
import { Badge, Box, Button, Callout, Card, Checkbox, Flex, Text, TextField } from '@radix-ui/themes';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useMemo, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { formatCount } from '../../api/hooks';
import { Empty, ErrorState, QueryView } from '../../components/states';
import { SetupChecks } from './platforms';

/** A connection's platform channels (GET /api/connections/{connection_id}/channels), with their sync_enabled. */
export const useConnectionChannels = (connectionId: string) =>
  useQuery({
    queryKey: ['connection-channels', connectionId],
    queryFn: () =>
      unwrap(
        api.GET('/api/connections/{connection_id}/channels', { params: { path: { connection_id: connectionId } } }),
      ),
  });

/**
 * The searchable channel picker of a connection (issue 26 point 7; spec "Connection channel", "Connections"): the
 * platform's channels from GET /api/connections/{connection_id}/channels, a search box filtering them by name (the `q`
 * query parameter), a checkbox each (private ones marked, member counts), select or clear what is shown, and "Save
 * selection" (PUT /api/connections/{connection_id}/channels `{channel_ids}`: exactly the checked channels sync).
 */
export const ChannelPicker = ({ connectionId }: { connectionId: string }) => {
  const qc = useQueryClient();
  const channels = useConnectionChannels(connectionId);
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const setQ = (v: string) =>
    setParams(
      (p) => {
        const n = new URLSearchParams(p);
        if (v) n.set('q', v);
        else n.delete('q');
        return n;
      },
      { replace: true },
    );
  const [chosen, setChosen] = useState<Set<string> | null>(null);
  const searchId = useId();
  const saved = useMemo(
    () => new Set((channels.data ?? []).filter((c) => c.sync_enabled).map((c) => c.id)),
    [channels.data],
  );
  const selection = chosen ?? saved;
  const dirty = chosen !== null && (chosen.size !== saved.size || [...chosen].some((id) => !saved.has(id)));
  const save = useMutation({
    mutationFn: () =>
      unwrap(
        api.PUT('/api/connections/{connection_id}/channels', {
          params: { path: { connection_id: connectionId } },
          body: { channel_ids: [...selection] },
        }),
      ),
    onSuccess: (data) => {
      qc.setQueryData(['connection-channels', connectionId], data.channels);
      setChosen(null);
      void qc.invalidateQueries({ queryKey: ['connections'] });
      void qc.invalidateQueries({ queryKey: ['channels'] });
    },
  });
  // biome-ignore lint/correctness/useExhaustiveDependencies: another connection starts a new selection
  useEffect(() => setChosen(null), [connectionId]);

  const toggle = (id: string, on: boolean) => {
    const n = new Set(selection);
    if (on) n.add(id);
    else n.delete(id);
    setChosen(n);
    save.reset();
  };

  return (
    <QueryView query={channels} label="Loading the platform's channels">
      {(list) => {
        if (list.length === 0)
          return (
            <Flex direction="column" gap="3">
              <Empty title="The platform lists no channel for this bot." />
              <SetupChecks />
            </Flex>
          );
        const needle = q.trim().toLowerCase().replace(/^#/, '');
        const shown = list.filter((c) => c.name.toLowerCase().replace(/^#/, '').includes(needle));
        const setShown = (on: boolean) => {
          const n = new Set(selection);
          for (const c of shown) on ? n.add(c.id) : n.delete(c.id);
          setChosen(n);
          save.reset();
        };
        return (
          <Flex direction="column" gap="3">
            <Flex gap="2" wrap="wrap" align="end">
              <Box flexGrow="1" minWidth="200px">
                <Text as="label" size="2" weight="medium" htmlFor={searchId}>
                  Search channels
                </Text>
                <TextField.Root
                  id={searchId}
                  type="search"
                  value={q}
                  placeholder="Filter by name"
                  onChange={(e) => setQ(e.target.value)}
                  mt="1"
                >
                  <TextField.Slot>
                    <MagnifyingGlassIcon aria-hidden />
                  </TextField.Slot>
                </TextField.Root>
              </Box>
              <Flex gap="2">
                <Button variant="soft" onClick={() => setShown(true)} disabled={shown.length === 0}>
                  Select shown
                </Button>
                <Button variant="soft" color="gray" onClick={() => setShown(false)} disabled={shown.length === 0}>
                  Clear shown
                </Button>
              </Flex>
            </Flex>
            <Text size="2" color="gray" role="status">
              {shown.length} of {list.length} channels shown · {selection.size} selected
            </Text>
            {shown.length === 0 ? (
              <Empty title={`No channel matches “${q}”.`} />
            ) : (
              <Card>
                <Flex asChild direction="column" gap="2">
                  <ul aria-label="Channels" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
                    {shown.map((c) => (
                      <li key={c.id}>
                        <Flex gap="2" align="center" wrap="wrap">
                          <Text as="label" size="2">
                            <Flex gap="2" align="center">
                              <Checkbox
                                checked={selection.has(c.id)}
                                onCheckedChange={(v) => toggle(c.id, v === true)}
                              />
                              {c.name}
                            </Flex>
                          </Text>
                          {c.is_private ? (
                            <Badge color="amber" highContrast size="1">
                              private
                            </Badge>
                          ) : null}
                          <Text size="1" color="gray">
                            {formatCount(c.member_count)} members
                          </Text>
                          {c.sync_enabled ? (
                            <Badge color="green" highContrast size="1">
                              syncing
                            </Badge>
                          ) : null}
                        </Flex>
                      </li>
                    ))}
                  </ul>
                </Flex>
              </Card>
            )}
            <Flex gap="3" align="center" wrap="wrap">
              <Button onClick={() => save.mutate()} loading={save.isPending} disabled={!dirty}>
                Save selection
              </Button>
              {dirty ? (
                <Text size="2" color="gray">
                  Unsaved changes
                </Text>
              ) : null}
            </Flex>
            {save.error ? <ErrorState error={save.error} /> : null}
            {save.data ? (
              <Callout.Root color="green" role="status">
                <Callout.Text>
                  Saved: {save.data.channel_count} {save.data.channel_count === 1 ? 'channel syncs' : 'channels sync'}{' '}
                  from this connection.
                </Callout.Text>
              </Callout.Root>
            ) : null}
          </Flex>
        );
      }}
    </QueryView>
  );
};
