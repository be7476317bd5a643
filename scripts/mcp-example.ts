/**
 * A short MCP client of a running Atlas, with the official SDK (docs/mcp.md): connects to `/mcp` over Streamable HTTP
 * with an API key, lists the tools, then searches the facts and asks a question, printing the answer and the
 * permalinks it cites.
 *
 *   ATLAS_URL=http://127.0.0.1:8000 ATLAS_API_KEY=atlas_... npx tsx scripts/mcp-example.ts "what did we decide about kafka?"
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const url = new URL('/mcp', process.env.ATLAS_URL ?? 'http://127.0.0.1:8000');
const key = process.env.ATLAS_API_KEY;
const question = process.argv[2] ?? 'What are the most recent decisions?';

const client = new Client({ name: 'atlas-mcp-example', version: '1.0.0' });
await client.connect(
  new StreamableHTTPClientTransport(url, { requestInit: { headers: key ? { authorization: `Bearer ${key}` } : {} } }),
);
const text = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;

console.log('tools:', (await client.listTools()).tools.map((t) => t.name).join(', '));
const found = JSON.parse(
  text(await client.callTool({ name: 'search_facts', arguments: { query: question, limit: 3 } })),
);
for (const r of found.results ?? []) console.log(`- ${r.text} (${r.author}, ${r.permalink})`);
const asked = await client.callTool({ name: 'ask', arguments: { question } });
if (asked.isError) console.error(text(asked));
else {
  const a = JSON.parse(text(asked));
  console.log(`\n${a.answer}\n`);
  for (const c of a.citations) console.log(`${c.id} ${c.permalink}`);
}
await client.close();
