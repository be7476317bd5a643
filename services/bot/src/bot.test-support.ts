import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A received POST: its path and JSON body. */
export interface Received {
  path: string;
  body: Record<string, unknown>;
}

/**
 * A real HTTP server standing in for the platforms' reply endpoints: platform_a's response_url
 * (`/response/<id>`) and platform_b's REST API (`/v10/webhooks/<application>/<token>`). Records every POST.
 */
export const openReceiver = async () => {
  const posts: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      posts.push({ path: req.url ?? '', body: body ? (JSON.parse(body) as Record<string, unknown>) : {} });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    posts,
    /** The first POST to `path`, waiting up to `timeoutMs`. */
    async next(path: string, timeoutMs = 30_000): Promise<Received> {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const hit = posts.find((p) => p.path === path);
        if (hit) return hit;
        if (Date.now() > until) throw new Error(`no POST to ${path} within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
};

/** platform_a's signature headers for `body` (v0 HMAC-SHA256 over `v0:<ts>:<body>`), ts in epoch seconds. */
export const signA = (secret: string, body: string, ts = Math.floor(Date.now() / 1000)) => ({
  'content-type': 'application/x-www-form-urlencoded',
  'x-slack-request-timestamp': String(ts),
  'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`,
});

/** A fresh Ed25519 key pair as platform_b's application key: the public key as 64 hex, and a signer for requests. */
export const ed25519App = () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' }) as { x: string };
  return {
    publicHex: Buffer.from(jwk.x, 'base64url').toString('hex'),
    headers: (body: string, ts = String(Math.floor(Date.now() / 1000))) => ({
      'content-type': 'application/json',
      'x-signature-timestamp': ts,
      'x-signature-ed25519': sign(null, Buffer.from(ts + body), privateKey).toString('hex'),
    }),
  };
};

/** A platform_a slash command body as the platform form-encodes it. */
export const slashCommand = (fields: {
  text: string;
  channel_id: string;
  response_url: string;
  trigger_id?: string;
  channel_name?: string;
}): string =>
  new URLSearchParams({
    token: 'legacy-unused',
    team_id: 'T1',
    team_domain: 'acme',
    channel_name: fields.channel_name ?? 'platform',
    user_id: 'U1',
    user_name: 'alice',
    command: '/atlas',
    api_app_id: 'A1',
    trigger_id: fields.trigger_id ?? `trigger-${Math.random().toString(36).slice(2)}`,
    ...fields,
  }).toString();
