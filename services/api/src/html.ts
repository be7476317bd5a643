import type { FastifyReply } from 'fastify';
import MarkdownIt from 'markdown-it';
import Negotiator from 'negotiator';

/** HTML-escapes text for an element or a quoted attribute (`&`, `<`, `>`, `"`; markdown-it's own escaper). */
export const esc: (text: string) => string = new MarkdownIt().utils.escapeHtml;

/**
 * Headers of every HTML page Atlas serves: no script, no remote content but images over https, no framing, no MIME
 * sniffing. Chat text is escaped when rendered; this is the second line of defence.
 */
const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

const STYLE = `
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1f2328;background:#fff}
header{padding:.6rem 1.2rem;border-bottom:1px solid #d0d7de;background:#f6f8fa}
header a{color:inherit;text-decoration:none;font-weight:600}
.wrap{display:flex;gap:2rem;padding:1rem 1.2rem;max-width:72rem}
nav{flex:0 0 16rem;font-size:.92rem}
nav ul{list-style:none;padding-left:.9rem;margin:.2rem 0}
nav>ul{padding-left:0}
nav .current{font-weight:600}
main{flex:1;min-width:0}
a{color:#0969da}
table{border-collapse:collapse}
td,th{border:1px solid #d0d7de;padding:.25rem .6rem}
code,pre{background:#f6f8fa;border-radius:4px}
pre{padding:.6rem;overflow:auto}
.cite{font-size:.8em;vertical-align:super;text-decoration:none}
.muted{color:#59636e;font-size:.9rem}
ol.sources li{margin:.3rem 0}
`;

/** A whole HTML document: `title` (text, escaped here) and `body` (HTML, already escaped by the caller). */
export const htmlDocument = (title: string, body: string): string =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header><a href="/">Atlas</a></header>
${body}
</body>
</html>
`;

/** Sends an HTML page with HTML_HEADERS and `status`. */
export const sendHtml = (reply: FastifyReply, status: number, title: string, body: string): FastifyReply =>
  reply.status(status).headers(HTML_HEADERS).send(htmlDocument(title, body));

/**
 * Whether the client asks for JSON rather than HTML (content negotiation on its Accept header, negotiator): a client
 * that prefers application/json gets JSON; a browser, a client without Accept and `*\/*` get HTML.
 */
export const wantsJson = (accept: string | undefined): boolean =>
  new Negotiator({ headers: { accept: accept ?? '*/*' } }).mediaType(['text/html', 'application/json']) ===
  'application/json';
