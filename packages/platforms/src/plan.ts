import { createHash } from 'node:crypto';
import { AtlasError, type Attachment, ChannelDiscovered, MessageIngested, type Reaction } from '@atlas/core';
import type { ZipLimits } from './zip.js';

export type ImportFormat = 'platform_a_export' | 'platform_b_export';

/** Options of planImport and the per-format parsers. */
export interface ImportOptions {
  /** Slack workspace URL (e.g. `https://acme.slack.com`) for permalinks; overrides the one inferred from the export. */
  workspaceUrl?: string;
  /** Bounds of a zipped export (default: DEFAULT_ZIP_LIMITS; docs/import.md "Archive bounds"). */
  zipLimits?: ZipLimits;
  /**
   * Called as each file of the export has been read: `read` of `total` files the plan reads (the total is known once
   * the file listing, or for a Slack export channels.json and groups.json, has been read; it does not change
   * afterwards).
   */
  onFileRead?: (read: number, total: number) => void;
}

/** Everything an import would apply, computed without side effects. */
export interface ImportPlan {
  format: ImportFormat;
  /** The path given. */
  source: string;
  /** Every channel in the export, even ones with 0 kept messages. */
  channels: ChannelDiscovered[];
  /** Kept messages, grouped by channel (in `channels` order), oldest first within a channel. */
  messages: MessageIngested[];
  /** Reason -> count of messages not kept, e.g. `{ 'subtype:channel_join': 873 }`. */
  skipped: Record<string, number>;
  /** By channelId: channel name, kept and skipped message counts. */
  perChannel: Record<string, { name: string; kept: number; skipped: number }>;
  /** Number of files read and parsed. */
  filesRead: number;
  /**
   * Channel access (docs/access.md "Channel access"): by channelId, the member user ids of each private channel whose
   * export lists them (Slack channels.json `members` of an `is_private` channel), and of every Slack groups.json
   * channel (`[]` when it lists none: nobody but admins); a channel not here is public to the workspace
   * (DiscordChatExporter lists no members). The import appends them as ChannelMembershipObserved (`source: 'import'`).
   */
  members: Record<string, string[]>;
}

/** JSON with object keys sorted at every level, so equal values always give equal strings. */
export function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** sha256 hex of the reader-visible fields of a message (re-imports compare it to detect changes). */
export function contentHash(fields: {
  text: string;
  editedAt: string | null;
  reactions: Reaction[];
  attachments: Attachment[];
  threadTs: string | null;
}): string {
  const { text, editedAt, reactions, attachments, threadTs } = fields;
  return createHash('sha256')
    .update(stableStringify({ text, editedAt, reactions, attachments, threadTs }))
    .digest('hex');
}

/** Media type of an attachment from its MIME type: `pdf`, `image`, else null. */
export function mediaTypeOfMime(mime: string | null): Attachment['mediaType'] {
  if (!mime) return null;
  const m = mime.toLowerCase();
  if (m === 'application/pdf') return 'pdf';
  return m.startsWith('image/') ? 'image' : null;
}

const IMAGE_EXT = new Set(['png', 'jpg', 'jpeg', 'gif', 'webp']);

/** Media type of an attachment from its file name or URL extension: `image`, `pdf`, else null. */
export function mediaTypeOfName(name: string): Attachment['mediaType'] {
  const ext = /\.([a-z0-9]+)$/i.exec(name.split(/[?#]/)[0] ?? '')?.[1]?.toLowerCase();
  if (ext === undefined) return null;
  if (ext === 'pdf') return 'pdf';
  return IMAGE_EXT.has(ext) ? 'image' : null;
}

/** Accumulates channels, kept messages and skip counts, then builds the ImportPlan. */
export class PlanBuilder {
  private readonly channels: ChannelDiscovered[] = [];
  private readonly messages: MessageIngested[] = [];
  private readonly skipped: Record<string, number> = {};
  private readonly perChannel: Record<string, { name: string; kept: number; skipped: number }> = {};
  private readonly memberLists: Record<string, string[]> = {};
  filesRead = 0;

  constructor(
    private readonly format: ImportFormat,
    private readonly source: string,
  ) {}

  channel(ch: ChannelDiscovered): void {
    this.channels.push(ChannelDiscovered.parse(ch));
    this.perChannel[ch.channelId] ??= { name: ch.name, kept: 0, skipped: 0 };
  }

  /** The member user ids of a private channel (sorted, unique). */
  members(channelId: string, userIds: readonly string[]): void {
    this.memberLists[channelId] = [...new Set(userIds)].sort();
  }

  skip(channelId: string, reason: string): void {
    this.skipped[reason] = (this.skipped[reason] ?? 0) + 1;
    const pc = this.perChannel[channelId];
    if (pc) pc.skipped += 1;
  }

  /** Validates with the core schema: a failure here is a mapping bug, reported as INTERNAL_ERROR. */
  keep(msg: MessageIngested): void {
    const parsed = MessageIngested.safeParse(msg);
    if (!parsed.success) {
      throw new AtlasError('INTERNAL_ERROR', `importer produced an invalid message ${msg.platformMessageId}`, {
        details: { channelId: msg.channelId, issues: parsed.error.issues },
        cause: parsed.error,
      });
    }
    this.messages.push(parsed.data);
    const pc = this.perChannel[msg.channelId];
    if (pc) pc.kept += 1;
  }

  build(): ImportPlan {
    const order = new Map(this.channels.map((c, i) => [c.channelId, i]));
    const messages = [...this.messages].sort((a, b) => (order.get(a.channelId) ?? 0) - (order.get(b.channelId) ?? 0));
    return {
      format: this.format,
      source: this.source,
      channels: this.channels,
      messages,
      skipped: this.skipped,
      perChannel: this.perChannel,
      filesRead: this.filesRead,
      members: this.memberLists,
    };
  }
}
