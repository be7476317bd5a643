import { randomUUID } from 'node:crypto';
import type { AuditEntry } from '@atlas/api';
import { type NewEvent, TOPICS } from '@atlas/core';
import type { EventLog } from '@atlas/eventlog';
import { pino } from 'pino';

/** Entries waiting for the log at most; beyond it new ones are dropped (and counted in the next warning). */
export const AUDIT_QUEUE_MAX = 10_000;

/** Where a failed or dropped append is reported (pino's warn, or the console's). */
export type AuditLog = { warn(obj: object, msg: string): void };

/** An audit entry (the auth hook's AuditEntry) as the AuditRecorded event of its id, keyed by principal or address. */
export const auditEvent = (entry: AuditEntry, id: string = randomUUID()): NewEvent<'AuditRecorded'> => ({
  type: 'AuditRecorded',
  key: entry.principal ?? entry.address,
  data: {
    id,
    action: entry.action,
    principal: entry.principal,
    keyId: entry.key_id,
    method: entry.method,
    route: entry.route,
    status: entry.status,
    address: entry.address,
    reason: entry.reason,
    at: entry.at,
  },
});

/** The audit sink of the API (AuthOptions.audit) and a way to wait for what it queued. */
export interface AuditSink {
  /** Queues the entry for the log and returns at once (never throws). */
  (entry: AuditEntry): void;
  /** Resolves once every entry queued so far was appended or given up (tests; a shutdown). */
  flush(): Promise<void>;
}

/**
 * The audit trail's writer (docs/access.md "Audit trail"): AuthOptions.audit appending each entry as AuditRecorded on
 * atlas.audit, without making the request wait. Entries queue in memory and go to the log in one append per turn
 * (one append in flight at a time, so a slow log batches them); an append that fails is logged as a warning with its
 * entry count and dropped, never failing a request; while more than AUDIT_QUEUE_MAX wait, new entries are dropped and
 * counted. The order of entries is kept.
 */
export const auditSink = (eventLog: Pick<EventLog, 'append'>, log: () => AuditLog): AuditSink => {
  let queue: NewEvent<'AuditRecorded'>[] = [];
  let dropped = 0;
  let running: Promise<void> | null = null;

  const drain = async (): Promise<void> => {
    await new Promise((r) => setImmediate(r)); // a turn: the entries of requests answered meanwhile join this append
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      try {
        await eventLog.append(TOPICS.audit, batch);
      } catch (err) {
        log().warn({ err, entries: batch.length }, 'audit entries not recorded: the event log refused the append');
      }
      if (dropped > 0) {
        log().warn({ entries: dropped }, `audit entries dropped: more than ${AUDIT_QUEUE_MAX} were waiting`);
        dropped = 0;
      }
    }
  };

  /** Starts a drain unless one runs; a drain ending with entries queued (pushed as it ended) starts the next. */
  const kick = (): void => {
    if (running || queue.length === 0) return;
    running = drain()
      .catch(() => undefined) // drain reports its own failures; a logger that throws loses only the report
      .finally(() => {
        running = null;
        kick();
      });
  };

  const sink = ((entry: AuditEntry) => {
    if (queue.length >= AUDIT_QUEUE_MAX) {
      dropped++;
      return;
    }
    queue.push(auditEvent(entry));
    kick();
  }) as AuditSink;
  sink.flush = async () => {
    while (running) await running;
  };
  return sink;
};

/**
 * The logger of the runtime's audit sink (api-ports): JSON lines on stderr (pino) at LOG_LEVEL,
 * component `audit`, made at the first warning.
 */
export const stderrAuditLog = (level: string): (() => AuditLog) => {
  let log: AuditLog | null = null;
  return () => {
    log ??= pino({ level, base: { component: 'audit' } }, pino.destination(2));
    return log;
  };
};
