import { arr, isObj, type JsonObject, nonEmpty, num, obj, str } from '../json.js';

/**
 * Discord message type numbers (API, research note §9) ↔ DiscordChatExporter's type names (note §12). Types DCE has
 * no name for are written as their number (`'20'`), as DCE does; the importer's DISCORD_KEPT_TYPES reads both.
 */
export const DISCORD_TYPE_NAMES: ReadonlyMap<number, string> = new Map([
  [0, 'Default'],
  [1, 'RecipientAdd'],
  [2, 'RecipientRemove'],
  [3, 'Call'],
  [4, 'ChannelNameChange'],
  [5, 'ChannelIconChange'],
  [6, 'ChannelPinnedMessage'],
  [7, 'GuildMemberJoin'],
  [18, 'ThreadCreated'],
  [19, 'Reply'],
]);

/** The reaction's emoji as the reactions route wants it: `name:id` for custom emoji, the character otherwise. */
export const reactionEmojiKey = (emoji: unknown): string => {
  const id = nonEmpty(emoji, 'id');
  const name = str(emoji, 'name') ?? '';
  return id !== undefined ? `${name}:${id}` : name;
};

/** A user object as DCE writes it: `name` = username, `nickname` = member nick ?? global_name ?? username. */
function exportUser(u: unknown, nick?: string): JsonObject {
  const username = str(u, 'username') ?? str(u, 'id') ?? 'unknown';
  return {
    id: str(u, 'id') ?? 'unknown',
    name: username,
    nickname: nick ?? nonEmpty(u, 'global_name') ?? username,
    isBot: isObj(u) && u.bot === true,
  };
}

/**
 * Converts a Discord API v10 message object to the DiscordChatExporter shape the importer maps, so the live client
 * and the importer share `mapDiscordMessage`. `reactionUsers` holds the users of each reaction (by
 * `reactionEmojiKey`), which the API returns from a separate route; a missing entry gives no users.
 */
export function toExportShape(m: JsonObject, reactionUsers: ReadonlyMap<string, unknown[]> = new Map()): JsonObject {
  const type = num(m, 'type') ?? 0;
  const ref = obj(m, 'message_reference');
  const member = obj(m, 'member');
  const edited = nonEmpty(m, 'edited_timestamp');
  return {
    id: str(m, 'id'),
    type: DISCORD_TYPE_NAMES.get(type) ?? String(type),
    timestamp: str(m, 'timestamp'),
    timestampEdited: edited ?? null,
    content: str(m, 'content') ?? '',
    author: exportUser(m.author, nonEmpty(member, 'nick')),
    attachments: arr(m, 'attachments').map((a) => ({
      id: str(a, 'id'),
      url: str(a, 'url'),
      fileName: str(a, 'filename'),
      fileSizeBytes: num(a, 'size'),
    })),
    reactions: arr(m, 'reactions').map((r) => {
      const emoji = obj(r, 'emoji');
      return {
        emoji: { id: nonEmpty(emoji, 'id') ?? '', name: str(emoji, 'name') ?? '' },
        count: num(r, 'count'),
        users: (reactionUsers.get(reactionEmojiKey(emoji)) ?? []).map((u) => exportUser(u)),
      };
    }),
    mentions: arr(m, 'mentions').map((u) => exportUser(u)),
    ...(ref
      ? {
          reference: {
            messageId: str(ref, 'message_id') ?? null,
            channelId: str(ref, 'channel_id') ?? null,
            guildId: str(ref, 'guild_id') ?? null,
          },
        }
      : {}),
  };
}
