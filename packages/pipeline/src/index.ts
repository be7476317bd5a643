export * from './entities/index.js';
export { OfflineFactExtractor } from './offline-extractor.js';
export type { ExtractionInput, FactExtractor, ThreadContext } from './port.js';
export { type Preprocessed, preprocess, summarizeThreadContext } from './preprocess.js';
export { selectFacts } from './select.js';
