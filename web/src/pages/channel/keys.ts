import { useQuery } from '@tanstack/react-query';
import { ApiError, api, unwrap } from '../../api/client';

/** Query keys of the workspace (shared by its tabs so a write can refresh the header's counts). */
export const channelKeys = {
  detail: (id: string) => ['channel', id] as const,
  stats: (id: string) => ['channel', id, 'stats'] as const,
  settings: (id: string) => ['channel', id, 'settings'] as const,
  /** `asOf`: the `as_of` instant of the list (null: now); every messages list of the channel starts with the first three. */
  messages: (id: string, asOf: string | null = null) => ['channel', id, 'messages', asOf ?? 'now'] as const,
  facts: (id: string, query: Record<string, unknown>) => ['channel', id, 'facts', query] as const,
  memory: (memoryId: string) => ['memory', memoryId] as const,
};

/** GET /api/channels/{channel_id}: the detailed channel (spec "Channel": counts, created_at, settings). */
export const useChannel = (channelId: string) =>
  useQuery({
    queryKey: channelKeys.detail(channelId),
    queryFn: () => unwrap(api.GET('/api/channels/{channel_id}', { params: { path: { channel_id: channelId } } })),
    retry: (n, e) => !(e instanceof ApiError && e.status === 404) && n < 2,
  });
