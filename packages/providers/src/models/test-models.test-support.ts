import os from 'node:os';
import path from 'node:path';
import { ONNX_MODELS, type OnnxModelName } from './catalog.js';
import { type FetchedModel, fetchModel } from './fetch.js';

/**
 * The model cache the test suites share (in the OS temp dir, kept between runs): a model is downloaded from Maven
 * Central once per machine, then only its checksums are checked.
 */
export const TEST_MODELS_DIR = path.join(os.tmpdir(), 'atlas-test-models');

/** The model provisioned into TEST_MODELS_DIR (fetched on first use; checked against its manifest after). */
export const testModel = (name: OnnxModelName = 'e5-small-v2'): Promise<FetchedModel> =>
  fetchModel(ONNX_MODELS[name], { dir: TEST_MODELS_DIR });
