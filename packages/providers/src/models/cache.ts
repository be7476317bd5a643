import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ONNX_MODELS, type OnnxModel } from './catalog.js';

/** Name of the manifest in a model's cache folder. */
export const MANIFEST_FILE = 'manifest.json';

/** A cached file: its size in bytes and SHA-256 (hex), as written when it was extracted. */
export interface CachedFile {
  bytes: number;
  sha256: string;
}

/**
 * `<models dir>/<stem>/manifest.json`: where the model came from and the checksums of what was extracted, so a copy
 * (an air-gapped install) can be checked without the network.
 */
export interface ModelManifest {
  model: string;
  id: string;
  /** `group:artifact:version`. */
  artifact: string;
  /** Where the jar came from: its URL, or `file:<path>` for a jar given by hand. */
  source: string;
  jar_sha256: string;
  /** The repository's own checksum file that was checked (`sha256` or `sha1`), or null for a jar given by hand. */
  repository_checksum: { algorithm: 'sha256' | 'sha1'; value: string } | null;
  files: Record<string, CachedFile>;
  fetched_at: string;
}

/** The two files the encoder loads. */
export interface ModelFiles {
  onnx: string;
  tokenizer: string;
}

/** A model's folder in the cache: `<models dir>/<stem>`. */
export const modelFolder = (model: OnnxModel, dir: string): string => path.join(dir, model.stem);

/** The file names of a model in its folder (as named in the jar). */
export const modelFileNames = (model: OnnxModel): { onnx: string; tokenizer: string } => ({
  onnx: `${model.stem}.onnx`,
  tokenizer: `${model.stem}-tokenizer.json`,
});

/** SHA-256 (hex) of a file, streamed. */
export const sha256File = async (file: string): Promise<string> => {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
};

const readManifest = (folder: string): ModelManifest | null => {
  try {
    return JSON.parse(readFileSync(path.join(folder, MANIFEST_FILE), 'utf8')) as ModelManifest;
  } catch {
    return null;
  }
};

/**
 * The model's files when its cache folder holds them: a manifest, and both files at the sizes it records (a cheap
 * check, no hashing: `verifyCachedModel` hashes). Null when the folder, the manifest or a file is missing or short.
 * Synchronous (a small file read and two stats), so that the embedder can be chosen where the runtime is assembled.
 */
export const cachedModel = (model: OnnxModel, dir: string): { files: ModelFiles; manifest: ModelManifest } | null => {
  const folder = modelFolder(model, dir);
  const manifest = readManifest(folder);
  if (!manifest) return null;
  const names = modelFileNames(model);
  for (const name of [names.onnx, names.tokenizer]) {
    const want = manifest.files[name];
    let size = -1;
    try {
      size = statSync(path.join(folder, name)).size;
    } catch {
      // missing: not cached
    }
    if (!want || size !== want.bytes) return null;
  }
  return {
    files: { onnx: path.join(folder, names.onnx), tokenizer: path.join(folder, names.tokenizer) },
    manifest,
  };
};

/**
 * Hashes the cached files of a model against its manifest. Returns the problems found (empty: the copy is whole);
 * `not cached` when the folder holds no complete copy.
 */
export const verifyCachedModel = async (model: OnnxModel, dir: string): Promise<string[]> => {
  const cached = cachedModel(model, dir);
  if (!cached) return ['not cached'];
  const problems: string[] = [];
  for (const file of [cached.files.onnx, cached.files.tokenizer]) {
    const want = cached.manifest.files[path.basename(file)]?.sha256;
    const got = await sha256File(file);
    if (got !== want) problems.push(`${path.basename(file)}: SHA-256 ${got}, manifest says ${want}`);
  }
  return problems;
};

/** One row of `atlas models list`. */
export interface ModelListing {
  model: OnnxModel;
  /** The model's cache folder (whether or not it exists). */
  path: string;
  cached: boolean;
  /** Bytes of the cached files (null when not cached). */
  bytes: number | null;
  /** The jar's size, what a fetch downloads. */
  downloadBytes: number;
  fetchedAt: string | null;
}

/** Every catalog model with its state in the cache `dir`. */
export const listModels = async (dir: string): Promise<ModelListing[]> =>
  Promise.all(
    Object.values(ONNX_MODELS).map(async (model) => {
      const c = cachedModel(model, dir);
      return {
        model,
        path: modelFolder(model, dir),
        cached: c !== null,
        bytes: c ? Object.values(c.manifest.files).reduce((s, f) => s + f.bytes, 0) : null,
        downloadBytes: model.artifact.bytes,
        fetchedAt: c?.manifest.fetched_at ?? null,
      };
    }),
  );
