import { z } from 'zod';

/**
 * The value types of the spec's conventions ("Conventions used throughout"): timestamps are ISO 8601 UTC strings,
 * date-only fields YYYY-MM-DD, 'int' means integer; and the closed value sets its tables name. Every response schema
 * of the contract is built from these.
 */

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]00:?00)$/;

/** Spec "Conventions": `<timestamp>`, an ISO 8601 UTC string (`2024-05-01T12:00:00.000Z`). */
export const Timestamp = z
  .string()
  .regex(ISO_UTC, 'must be an ISO 8601 UTC timestamp')
  .refine((v) => !Number.isNaN(Date.parse(v)), 'must be a valid date and time');

/** Spec "Conventions": `<date>`, date-only YYYY-MM-DD (a real calendar date). */
export const DateOnly = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a YYYY-MM-DD date')
  .refine((v) => new Date(`${v}T00:00:00Z`).toISOString().startsWith(v), 'must be a real calendar date');

/** Spec "Conventions": 'int' means integer. */
export const Int = z.number().int();
/** A count: an integer, never negative. */
export const Count = z.number().int().min(0);
/** Spec "Limits": confidence, quality and score ranges 0.0 to 1.0. */
export const Unit = z.number().min(0).max(1);
/** A percentage, 0 to 100 (sync progress). */
export const Percentage = z.number().min(0).max(100);
/** A duration or latency: a number, never negative. */
export const NonNegative = z.number().min(0);
/** An opaque identifier: a non-empty string. */
export const Id = z.string().min(1);
/** Spec "Memory": id is a UUID. */
export const Uuid = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a UUID');
/** A URL (permalinks). */
export const Url = z.url();

/**
 * The null convention (docs/conventions.md "Values that do not exist"): a field the spec lists is
 * always present; when its value does not exist (a channel never synced, the last page of a list) it is `null`,
 * never omitted, never an empty string.
 */
export const orNull = <T extends z.ZodType>(t: T) => t.nullable();

/** Spec "Conventions": platform values. */
export const Platform = z.enum(['platform_a', 'platform_b']);
/** Spec "Memory": importance. */
export const Importance = z.enum(['low', 'medium', 'high']);
/** Spec "Memory": fact_type. */
export const FactType = z.enum(['decision', 'opinion', 'observation', 'action_item', 'question']);
/** Spec "Graph entity": type. */
export const EntityType = z.enum(['Person', 'Decision', 'Project', 'Technology', 'Team', 'Meeting']);
/** Spec "Graph entity": status. */
export const EntityStatus = z.enum(['active', 'pending']);
/** Spec "Relationship": type. */
export const RelationshipType = z.enum([
  'DECIDED_BY',
  'PARTICIPATED_IN',
  'WORKS_ON',
  'USES',
  'MEMBER_OF',
  'RELATED_TO',
]);
/** Spec "Connection": status. */
export const ConnectionStatus = z.enum(['connected', 'disconnected', 'error']);
/** Spec "Sync job": status. */
export const SyncStatus = z.enum(['queued', 'running', 'completed', 'failed', 'cancelled']);
/** Spec "Sync job": current_stage, in this order. */
export const SYNC_STAGE_ORDER = ['fetching_messages', 'extracting_facts', 'building_graph', 'generating_wiki'] as const;
export const SyncStage = z.enum(SYNC_STAGE_ORDER);
/** Spec "Wiki": node and page page_type. */
export const PageType = z.enum(['fixed', 'topic', 'sub-topic']);
/** Spec "Ask session and messages": role. */
export const Role = z.enum(['user', 'assistant']);
/** Spec "Ask citation": media_type. */
export const AskMediaType = z.enum(['link', 'pdf', 'image']);
/** Spec "Search": search_method and search_mode. */
export const SearchMethod = z.enum(['vector', 'keyword', 'hybrid']);
/** Spec "Activity feed": activity types. */
export const ActivityType = z.enum([
  'sync_completed',
  'wiki_generated',
  'connection_established',
  'connection_failed',
  'fact_extracted',
  'entity_created',
]);
/** Spec "Errors → Connection validation errors". */
export const ValidationErrorCode = z.enum([
  'INVALID_CREDENTIALS',
  'AUTH_EXPIRED',
  'RATE_LIMITED',
  'INSUFFICIENT_PERMISSIONS',
  'NETWORK_ERROR',
  'PLATFORM_ERROR',
]);
/** Spec "Errors → Sync errors". */
export const SyncErrorCode = z.enum([
  'PLATFORM_ERROR',
  'AUTH_ERROR',
  'RATE_LIMIT',
  'CHANNEL_NOT_FOUND',
  'INTERNAL_ERROR',
]);
/** Spec "Errors → Stream errors". */
export const StreamErrorCode = z.enum(['RATE_LIMIT_EXCEEDED', 'INVALID_REQUEST', 'INTERNAL_ERROR']);
/** Spec "Ask session and messages": citation ids `[<n>]` (also wiki citations). */
export const CitationId = z.string().regex(/^\[\d+\]$/, 'must be of the form [n]');
/** Spec "Wiki" node: section_number, dotted for children (`7`, `7.1`). */
export const SectionNumber = z.string().regex(/^\d+(\.\d+)*$/, 'must be a dotted section number');
/** Spec "Sync schedule": a cron-style string of five fields. */
export const CronSchedule = z.string().regex(/^\S+( \S+){4}$/, 'must be five space-separated cron fields');
