import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted failure of an emulator (test support). `match` is a Slack method name (`conversations.history`) or a
 * Discord path pattern (RegExp on `/api/v10/...`, or a substring); `skip` matching requests pass first, then `times`
 * (default 1) fail:
 * - `ratelimit`: HTTP 429 with `Retry-After: <retryAfter>` seconds (Slack body `ratelimited`; Discord JSON `retry_after`
 *   and X-RateLimit headers);
 * - `status`: that HTTP status (5xx) with a short body;
 * - `drop`: the socket is destroyed without an answer;
 * - `error`: Slack only, `{ok:false, error}` with HTTP 200 (e.g. `internal_error`).
 */
export interface Fault {
  match?: string | RegExp;
  kind: 'ratelimit' | 'status' | 'drop' | 'error';
  retryAfter?: number;
  status?: number;
  error?: string;
  times?: number;
  skip?: number;
}

/** One request seen by an emulator (tokens are never recorded). */
export interface LoggedRequest {
  method: string;
  /** Path and query. */
  url: string;
  /** Slack method name or Discord path. */
  call: string;
  /** Parsed parameters (Slack form/JSON/query; Discord query), without `token`. */
  params: Record<string, string>;
  status: number;
  fault?: Fault['kind'];
}

/** Holds scripted faults and hands out the one that applies to a request, if any. */
export class FaultQueue {
  private readonly faults: (Fault & { left: number; skipLeft: number })[] = [];

  add(f: Fault): void {
    this.faults.push({ ...f, left: f.times ?? 1, skipLeft: f.skip ?? 0 });
  }

  clear(): void {
    this.faults.length = 0;
  }

  /** The first live fault matching `call`, counted down; undefined when none applies. */
  take(call: string): Fault | undefined {
    for (const f of this.faults) {
      if (f.left <= 0) continue;
      const hit = f.match === undefined || (typeof f.match === 'string' ? call.includes(f.match) : f.match.test(call));
      if (!hit) continue;
      if (f.skipLeft > 0) {
        f.skipLeft -= 1;
        continue;
      }
      f.left -= 1;
      return f;
    }
    return undefined;
  }
}

/** Reads a request body as text. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Writes a JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(text);
}

/** Starts `handler` on 127.0.0.1, port 0; returns the server and its origin (`http://127.0.0.1:PORT`). */
export async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    handler(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: String((err as Error).message) });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Closes a server, ending idle keep-alive sockets. */
export function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
