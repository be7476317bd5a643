import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { freePort } from '../free-port.test-support.js';
import { stopChild } from '../stop-child.test-support.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const DATA = path.resolve(ROOT, '../shared/data');
/** The bootstrap admin key of the server under test (ATLAS_ADMIN_API_KEY): keys are required, as in production. */
export const ADMIN_KEY = 'web-suite-admin-key-at-least-32-characters';
/** Where the suite saves a screenshot of each screen at each width (docs/tests.md "Web UI"). */
export const SCREENSHOTS = path.join(ROOT, '.atlas-test/screenshots');
/** The two widths every screen is checked and photographed at (issue 26 point 9). */
export const WIDTHS = [1280, 390] as const;

/**
 * The Chromium the suite drives: ATLAS_TEST_CHROMIUM (`.ci/run` installs Debian's `chromium` and sets it to
 * /usr/bin/chromium), else none and the suite is skipped, like a server suite whose server is not listed.
 */
export const CHROMIUM: string | undefined = process.env.ATLAS_TEST_CHROMIUM || undefined;

/** Runs a program to completion; rejects with its output when it exits non-zero. */
const run = (program: string, args: string[], env: Record<string, string> = {}) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(program, args, { cwd: ROOT, env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${path.basename(program)} ${args[0]} exited ${code}: ${out}`)),
    );
  });

/** Runs the real `atlas` binary to completion. */
const atlas = (args: string[], env: Record<string, string>) =>
  run(process.execPath, [path.join(ROOT, 'bin/atlas.mjs'), ...args], env);

/** A running Atlas for the browser: its address and how to stop it. */
export interface WebAtlas {
  url: string;
  dataDir: string;
  /** The built UI it serves (WEB_UI_DIR). */
  webDir: string;
  close(): Promise<void>;
}

const SERVER_ENV = {
  ATLAS_ADMIN_API_KEY: ADMIN_KEY,
  ADAPTER_MOCK: 'true', // connections and syncs against the mock platform, no credentials
  CREDENTIAL_MASTER_KEY: '5e'.repeat(32),
};

/**
 * A real `atlas start` on the real exports: OLake (Slack, 5 channels) and Clojurians (Slack, 82 channels, 7,896
 * messages) imported through the CLI into a fresh data dir, then the server on a free port with an admin key required
 * and the mock platform on. ATLAS_TEST_WEB_DATA_DIR names a data dir imported before (a copy is used, so a rerun
 * skips the imports while writing the UI; CI always imports). `empty`: nothing imported (a new instance's first run);
 * `webDir`: serve a UI built before (by another startWebAtlas) instead of building one; `imports`: these exports
 * (folders under ../shared/data) instead, never cached; `env`: more environment for the imports and the server.
 */
export const startWebAtlas = async (
  opts: { empty?: boolean; webDir?: string; imports?: string[]; env?: Record<string, string> } = {},
): Promise<WebAtlas> => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'atlas-web-'));
  const cached = process.env.ATLAS_TEST_WEB_DATA_DIR;
  const env = { ...SERVER_ENV, ...opts.env };
  if (opts.empty) {
    // nothing imported: the first run a new team sees
  } else if (opts.imports) {
    for (const dir of opts.imports)
      await atlas(['import', path.join(DATA, dir), '--data-dir', dataDir, '--no-progress'], env);
  } else if (cached && existsSync(path.join(cached, '.imported'))) cpSync(cached, dataDir, { recursive: true });
  else {
    for (const dir of ['slack-olake/export', 'slack-clojurians-2018-02/export'])
      await atlas(['import', path.join(DATA, dir), '--data-dir', dataDir, '--no-progress'], SERVER_ENV);
    if (cached) {
      rmSync(cached, { recursive: true, force: true });
      cpSync(dataDir, cached, { recursive: true });
      writeFileSync(path.join(cached, '.imported'), new Date().toISOString());
    }
  }
  // The UI as the sources stand now, built for this run alone (a concurrent build of web/dist cannot pull assets away),
  // as `npm ci` builds it for users: NODE_ENV production (vitest's NODE_ENV=test would give React's development build).
  const webDir = opts.webDir ?? path.join(dataDir, 'web-ui');
  if (!opts.webDir)
    await run(
      path.join(ROOT, 'node_modules/.bin/vite'),
      ['build', 'web', '--outDir', webDir, '--emptyOutDir', '--logLevel', 'warn'],
      { NODE_ENV: 'production' },
    );
  const port = await freePort();
  const server: ChildProcess = spawn(
    process.execPath,
    [path.join(ROOT, 'bin/atlas.mjs'), 'start', '--port', String(port), '--data-dir', dataDir],
    { cwd: ROOT, env: { ...process.env, ...env, WEB_UI_DIR: webDir }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  server.stderr?.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const t0 = Date.now();
  for (;;) {
    const h = await fetch(`${url}/api/health`)
      .then(async (r) => (r.ok ? ((await r.json()) as Record<string, unknown>) : null))
      .catch(() => null);
    if (h && !('starting' in h)) break;
    if (server.exitCode !== null || Date.now() - t0 > 180_000)
      throw new Error(`atlas start did not serve within 180 s (exit ${server.exitCode}): ${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    dataDir,
    webDir,
    async close() {
      await stopChild(server);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
};

/** A JSON call to the server under test as its admin; the parsed body (or text) and status. */
export const adminCall = async <T = unknown>(atlasUrl: string, method: string, route: string, body?: unknown) => {
  const res = await fetch(`${atlasUrl}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${ADMIN_KEY}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: json as T };
};

/** Debian's Chromium, headless. */
export const launchBrowser = (): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM!, headless: true, args: ['--no-sandbox'] });

/**
 * A browser page `width` px wide (height 900) signed in with `key` (kept as the UI keeps it, in sessionStorage), or
 * signed out with `key` null. Console errors of the page are collected in `errors` (a test can assert none).
 */
export const openPage = async (
  browser: Browser,
  atlasUrl: string,
  width: number,
  key: string | null = ADMIN_KEY,
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> => {
  const context = await browser.newContext({ viewport: { width, height: 900 }, baseURL: atlasUrl });
  if (key) await context.addInitScript(`sessionStorage.setItem('atlas.apiKey', ${JSON.stringify(key)})`);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return { context, page, errors };
};

/** Saves `.atlas-test/screenshots/<name>-<width>.png` (the whole page). */
export const screenshot = async (page: Page, name: string): Promise<string> => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}-${page.viewportSize()?.width ?? 0}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
};

/**
 * The page's accessibility violations of impact serious or critical (axe-core, WCAG 2 A and AA rules): each as
 * `rule: target` lines, empty when none (issue 26 point 9).
 */
export const seriousA11yViolations = async (page: Page): Promise<string[]> => {
  const r = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 5)
          .join(' | ')}`,
    );
};

/** What every screen's test receives: the server, the browser, and the ids of channels of the imported exports. */
export interface WebContext {
  atlas: WebAtlas;
  browser: Browser;
  /** Channel ids by name (a name both exports hold, such as `general`, is the Clojurians one): `help` is OLake #help. */
  channels: Record<string, string>;
}
