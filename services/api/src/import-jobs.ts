import { randomUUID } from 'node:crypto';
import { AtlasError, type ErrorCode } from '@atlas/core';

/**
 * Import jobs of the browser import (POST /api/imports; docs/import.md "Importing from the browser"): the stages an
 * import goes through, in order, with the unit each counts. `reading files` counts the export's files read and checked
 * (the validation of `atlas import`); every later stage counts the export's kept messages (unchanged ones count as
 * done), as the CLI's progress display does (docs/import.md "Progress").
 */
export const IMPORT_STAGES = [
  'reading files',
  'checking for changes',
  'appending',
  'extracting facts',
  'indexing',
  'building the graph',
] as const;
export type ImportStage = (typeof IMPORT_STAGES)[number];

/** Where an import stands: its stage, the unit it counts (`files` while reading, else `messages`), done of total. */
export interface ImportProgressReport {
  stage: ImportStage;
  unit: 'files' | 'messages';
  done: number;
  total: number;
}

/** What a completed import added, as `atlas import` prints it (snake_case). */
export interface ImportResult {
  /** `platform_a_export` (a Slack export) or `platform_b_export` (DiscordChatExporter). */
  format: string;
  /** Channels of the export, and its kept messages (new, changed and unchanged). */
  channels: number;
  messages: number;
  /** Messages appended (new or changed since the last import) and left alone (same content hash). */
  new_or_changed: number;
  unchanged: number;
  /** Messages not kept, by reason (`subtype:channel_join` …). */
  skipped: Record<string, number>;
  /** Facts of the export's channels once projected (all of them, earlier imports' too). */
  facts: number;
  /** Events of this import's projection sent to the dead-letter queue (GET /api/admin/dead-letters). */
  dead_lettered: number;
  /** Seconds from the start of validation (the upload received) to the projection done. */
  seconds: number;
}

/** An import the runtime checked (every file read and parsed, nothing written), ready to apply. */
export interface ValidatedImport {
  platform: 'platform_a' | 'platform_b';
  /** Channels and kept messages of the export. */
  channels: number;
  messages: number;
  /**
   * Appends the import's events (one atomic append of what is new or changed) and waits until the projectors have
   * projected them, reporting each stage; resolves with what it added. `signal` aborted (the server stops): the wait
   * ends with an error (what was appended is projected at the next start). Throws what the stores throw.
   */
  apply(report: (p: ImportProgressReport) => void, signal: AbortSignal): Promise<ImportResult>;
}

/** What the import routes need of the runtime (services/runtime import-wiring.ts). Absent: the routes are not served. */
export interface ImportPorts {
  /** The largest upload accepted, bytes (IMPORT_MAX_UPLOAD_MB). */
  maxUploadBytes: number;
  /**
   * Plans the import of the file at `path` (a `.zip` of a Slack export, or a DiscordChatExporter `.json`) exactly as
   * `atlas import` does: every file read and checked, within the archive bounds (IMPORT_ZIP_MAX_*), reporting the
   * `reading files` stage. Throws AtlasError IMPORT_FAILED (`<file>: <problem>`, details.file) on a bad file;
   * nothing is written.
   */
  validate(path: string, report: (p: ImportProgressReport) => void): Promise<ValidatedImport>;
}

export type ImportStatus = 'validating' | 'importing' | 'projecting' | 'completed' | 'failed';

/** An import job as GET /api/imports/{import_id} answers it (contract ImportJobSchema). */
export interface ImportJob {
  import_id: string;
  status: ImportStatus;
  /** The uploaded file's name (its base name, as the browser sent it). */
  file_name: string;
  size_bytes: number;
  /** Known once validated; null while validating or when validation failed. */
  platform: 'platform_a' | 'platform_b' | null;
  started_at: string;
  completed_at: string | null;
  progress: ImportProgressReport;
  result: ImportResult | null;
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> } | null;
}

const STATUS_OF_STAGE: Record<ImportStage, ImportStatus> = {
  'reading files': 'validating',
  'checking for changes': 'importing',
  appending: 'importing',
  'extracting facts': 'projecting',
  indexing: 'projecting',
  'building the graph': 'projecting',
};

/**
 * The import jobs of this process, in memory: the most recent `keep` (default 20; older finished ones are dropped,
 * a running one never). One import validates and appends at a time (`busy`); a job in `projecting` does not hold
 * the next one back. Jobs are lost when the process stops (the imported data is not).
 */
export class ImportJobs {
  private readonly jobs = new Map<string, ImportJob>();

  constructor(private readonly keep = 20) {}

  /** A new job in `validating` (stage `reading files`, 0 of 0), now. */
  create(fileName: string, sizeBytes: number, now = new Date()): ImportJob {
    const job: ImportJob = {
      import_id: randomUUID(),
      status: 'validating',
      file_name: fileName,
      size_bytes: sizeBytes,
      platform: null,
      started_at: now.toISOString(),
      completed_at: null,
      progress: { stage: 'reading files', unit: 'files', done: 0, total: 0 },
      result: null,
      error: null,
    };
    this.jobs.set(job.import_id, job);
    this.prune();
    return job;
  }

  get(id: string): ImportJob | undefined {
    return this.jobs.get(id);
  }

  /** The jobs kept, newest first. */
  list(): ImportJob[] {
    return [...this.jobs.values()].reverse();
  }

  /** The job still validating or importing (appending), if any. */
  busy(): ImportJob | undefined {
    return [...this.jobs.values()].find((j) => j.status === 'validating' || j.status === 'importing');
  }

  /** Records a stage's progress: the status follows the stage; counts are whole, never negative, done ≤ total. */
  report(job: ImportJob, p: ImportProgressReport): void {
    if (job.status === 'completed' || job.status === 'failed') return;
    const total = Math.max(0, Math.floor(p.total));
    job.progress = { stage: p.stage, unit: p.unit, total, done: Math.min(total, Math.max(0, Math.floor(p.done))) };
    job.status = STATUS_OF_STAGE[p.stage];
  }

  complete(job: ImportJob, result: ImportResult, now = new Date()): void {
    job.status = 'completed';
    job.progress = { ...job.progress, done: job.progress.total };
    job.result = result;
    job.completed_at = now.toISOString();
    this.prune();
  }

  /**
   * Fails the job with `err`'s code, message and details; an error not written for the caller (a 5xx AtlasError that
   * is not `expose`d, or not an AtlasError: INTERNAL_ERROR) keeps its code with a fixed message, as the error body does.
   */
  fail(job: ImportJob, err: unknown, now = new Date()): void {
    job.status = 'failed';
    job.completed_at = now.toISOString();
    job.error =
      err instanceof AtlasError && err.expose
        ? { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) }
        : {
            code: err instanceof AtlasError ? err.code : 'INTERNAL_ERROR',
            message: 'the import failed on a server error (see the server log)',
          };
    this.prune();
  }

  private prune(): void {
    const done = [...this.jobs.values()].filter((j) => j.status === 'completed' || j.status === 'failed');
    for (let extra = this.jobs.size - this.keep, i = 0; extra > 0 && i < done.length; extra--, i++)
      this.jobs.delete(done[i]!.import_id);
  }
}
