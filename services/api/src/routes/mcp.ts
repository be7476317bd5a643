import { AtlasError } from '@atlas/core';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest, InjectOptions } from 'fastify';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { type ApiCall, createAtlasMcpServer, type ToolGate } from '../mcp.js';

/** Calls of one MCP tool per caller per minute, by default (MCP_TOOL_RATE_LIMIT_PER_MINUTE; docs/mcp.md). */
export const MCP_TOOL_RATE_LIMIT_PER_MINUTE = 60;

export interface McpRoutesOptions {
  /** The app's own inject: a tool's REST call runs every route hook (auth, visibility, rate limits) as the caller. */
  inject: FastifyInstance['inject'];
  /** Calls of one tool per caller per minute. */
  toolRateLimitPerMinute?: number;
}

/**
 * The MCP server over Streamable HTTP at `/mcp` (issue 25 points 3 and 4; docs/mcp.md), stateless: each POST is one
 * JSON-RPC exchange with a fresh server, answered as JSON. The caller has passed the auth hook like any route (an
 * API key, role reader or above; `/mcp` in auth/policy.ts), and each tool's REST call carries its credentials, so a
 * tool sees exactly what the key may see (roles, channel scope, private channels) and is refused what it may not
 * (start_sync below member: the route's 403 as the tool's error). Each tool is rate limited per caller (key, else
 * address). GET and DELETE (a session's stream, its end) answer 405: no session is kept.
 */
export const mcpRoutes: FastifyPluginAsync<McpRoutesOptions> = async (app, opts) => {
  const limiter = new RateLimiterMemory({
    keyPrefix: 'mcp-tool',
    points: opts.toolRateLimitPerMinute ?? MCP_TOOL_RATE_LIMIT_PER_MINUTE,
    duration: 60,
  });
  const gate =
    (request: FastifyRequest): ToolGate =>
    async (tool) => {
      const who = request.principal?.key_id ?? request.principal?.name ?? request.ip;
      try {
        await limiter.consume(`${who}:${tool}`);
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        const s = Math.ceil(err.msBeforeNext / 1000);
        throw new AtlasError(
          'RATE_LIMIT_EXCEEDED',
          `${tool}: more than ${limiter.points} calls a minute; retry in ${s} s`,
        );
      }
    };
  app.post('/mcp', async (request, reply) => {
    const authorization = request.headers.authorization;
    const call: ApiCall = async (method, url, body) => {
      const res = await opts.inject({
        method,
        url,
        remoteAddress: request.ip,
        headers: {
          'x-request-id': request.id,
          ...(authorization ? { authorization } : {}),
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { payload: JSON.stringify(body) } : {}),
      } as InjectOptions);
      return { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), raw: res.body };
    };
    const server = createAtlasMcpServer(call, gate(request));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (err) {
      // Hijacked: the error handler cannot answer any more, so a failure answers here rather than hang the client.
      request.log.error({ err }, 'mcp: request failed');
      if (!reply.raw.headersSent) {
        const body = {
          error: { code: 'INTERNAL_ERROR', message: 'internal server error', details: { request_id: request.id } },
        };
        reply.raw.writeHead(500, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
      } else reply.raw.end();
    }
  });
  const noSession = async () => {
    throw new AtlasError('METHOD_NOT_ALLOWED', 'this MCP server keeps no session: POST each request to /mcp');
  };
  app.get('/mcp', noSession);
  app.delete('/mcp', noSession);
};
