import { AtlasError } from '@atlas/core';
import type { ConnectionStore, DocumentStore } from '@atlas/stores';

/** What the unknown-channel rule reads: the document store and, when registered, the connection store. */
export interface KnownChannelPorts {
  documents: Pick<DocumentStore, 'knownChannels'>;
  connections?: { store: Pick<ConnectionStore, 'listedChannels'> } | undefined;
}

/** AtlasError NOT_FOUND (404) for an unknown channel, with `details.channel_id` (the shared error body). */
export const unknownChannel = (channelId: string): AtlasError =>
  new AtlasError('NOT_FOUND', `channel '${channelId}' was not found`, { details: { channel_id: channelId } });

/**
 * The one rule for a `channel_id` given in a path, a query or a body (docs/conventions.md "Unknown channel"): a
 * channel is known when the document store has it (it was imported or synced at least once); anything else is 404
 * NOT_FOUND with the shared error body. With `opts.listed` (the sync and schedule routes, which is how a first sync
 * starts) a channel that a connection lists in its saved channel list counts as known too. Returns a check that
 * resolves when every given id is known (undefined and null, "all channels", pass) and throws `unknownChannel` for
 * the first one that is not.
 */
export const channelCheck =
  (ports: KnownChannelPorts, opts: { listed?: boolean } = {}) =>
  async (...channelIds: readonly (string | null | undefined)[]): Promise<void> => {
    const ids = [...new Set(channelIds.filter((c): c is string => typeof c === 'string'))];
    if (ids.length === 0) return;
    const known = await ports.documents.knownChannels(ids);
    const rest = ids.filter((id) => !known.has(id));
    if (rest.length === 0) return;
    const listed =
      opts.listed && ports.connections ? await ports.connections.store.listedChannels(rest) : new Set<string>();
    const missing = rest.find((id) => !listed.has(id));
    if (missing !== undefined) throw unknownChannel(missing);
  };
