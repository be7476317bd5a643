import { type DependencyStatus, type HealthCheck, probeHealth } from './routes/health.js';

/** Alert severities (spec "Alerts (operational)"): page, chat, warning, info. */
export type AlertSeverity = 'page' | 'chat' | 'warning' | 'info';

/** One alert: a dependency whose status changed, as logged and sent to the webhook. */
export interface Alert {
  severity: AlertSeverity;
  dependency: string;
  status: DependencyStatus;
  /** The status before (null on the first check). */
  previous: DependencyStatus | null;
  message: string;
  /** ISO 8601. */
  at: string;
}

/** The logger alerts go to (pino's methods fit): `error` for page, `warn` for chat and warning, `info` for info. */
export interface AlertLogger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * Critical dependencies (spec "Degraded behaviour when a dependency fails": vector store, document store, primary
 * LLM provider are critical; the event log carries every write). Down → a paging alert; another dependency down →
 * a chat notification.
 */
export const CRITICAL_DEPENDENCIES: readonly string[] = ['document_store', 'vector_store', 'event_log', 'llm_provider'];

export interface HealthMonitorOptions {
  log: AlertLogger;
  /** POSTed each alert as JSON (ALERT_WEBHOOK_URL); failures are logged, never thrown. */
  webhookUrl?: string | undefined;
  /** Time between checks, ms (HEALTH_CHECK_INTERVAL_MS). */
  intervalMs: number;
  /** Per-check timeout, ms (default 5,000: the spec's store timeouts). */
  timeoutMs?: number;
  /** Clock (tests). */
  now?: () => Date;
}

/**
 * Watches the health checks of GET /api/health and raises an alert on each change of a dependency's status (spec
 * "Alerts (operational)"): a critical dependency failing → `page`, another failing → `chat`, a dependency turning
 * degraded → `warning`, a recovery to healthy → `info`. The first check raises alerts only for what is not healthy
 * (a dependency that is degraded by design, e.g. no LLM configured, warns once at start, not on every check). Each
 * alert is a structured log event ({alert: true, severity, dependency, status, previous}) and, with a webhook URL, a
 * JSON POST (5 s timeout).
 */
export class HealthMonitor {
  private readonly last = new Map<string, DependencyStatus>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<Alert[]> | null = null;

  constructor(
    private readonly checks: readonly HealthCheck[],
    private readonly opts: HealthMonitorOptions,
  ) {}

  /** Runs every check once and raises the alerts of the changes; resolves with them. */
  async tick(): Promise<Alert[]> {
    this.running ??= this.check().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /**
   * Checks every `intervalMs`, the first time one interval after the start (a process starting up, its encoder still
   * loading, is not paged for); an unref'd timer, so it never keeps the process alive.
   */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.opts.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async check(): Promise<Alert[]> {
    const timeoutMs = this.opts.timeoutMs ?? 5_000;
    const results = await Promise.all(
      this.checks.map(async (c) => [c.name, await probeHealth(() => c.check(), timeoutMs)] as const),
    );
    const at = (this.opts.now?.() ?? new Date()).toISOString();
    const alerts: Alert[] = [];
    for (const [dependency, status] of results) {
      const previous = this.last.get(dependency) ?? null;
      this.last.set(dependency, status);
      if (status === previous || (previous === null && status === 'healthy')) continue;
      const severity: AlertSeverity =
        status === 'failing'
          ? CRITICAL_DEPENDENCIES.includes(dependency)
            ? 'page'
            : 'chat'
          : status === 'degraded'
            ? 'warning'
            : 'info';
      const message =
        status === 'healthy'
          ? `${dependency} recovered (was ${previous})`
          : `${dependency} is ${status}${previous ? ` (was ${previous})` : ''}`;
      alerts.push({ severity, dependency, status, previous, message, at });
    }
    for (const a of alerts) {
      const fields = {
        alert: true,
        severity: a.severity,
        dependency: a.dependency,
        status: a.status,
        previous: a.previous,
      };
      if (a.severity === 'page') this.opts.log.error(fields, a.message);
      else if (a.severity === 'info') this.opts.log.info(fields, a.message);
      else this.opts.log.warn(fields, a.message);
    }
    if (this.opts.webhookUrl) await Promise.all(alerts.map((a) => this.send(a)));
    return alerts;
  }

  private async send(a: Alert): Promise<void> {
    try {
      const res = await fetch(this.opts.webhookUrl!, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(a),
        signal: AbortSignal.timeout(5_000),
      });
      if (!res.ok) this.opts.log.warn({ status: res.status }, `alert webhook answered ${res.status}`);
    } catch (err) {
      this.opts.log.warn({ err: String(err) }, 'alert webhook unreachable');
    }
  }
}
