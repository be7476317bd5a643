import { useQuery } from '@tanstack/react-query';
import { ApiError, api, unwrap } from '../../api/client';

/** Query keys of the workspace (shared by its tabs so a write can refresh the header's counts). */
export const channelKeys = {
  detail: (id: string) => ['channel', id] as const,
  stats: (id: string) => ['channel', id, 'stats'] as const,
  settings: (id: string) => ['channel', id, 'settings'] as const,
  messages: (id: string) => ['channel', id, 'messages'] as const,
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
