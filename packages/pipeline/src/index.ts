export * from './entities/index.js';
export {
  LLM_MAX_FACTS_PER_MESSAGE,
  LlmFactAnswer,
  LlmFactExtractor,
  type LlmFactExtractorOptions,
  type LlmFactExtractorStats,
  toFacts,
} from './llm-extractor.js';
export { OfflineFactExtractor } from './offline-extractor.js';
export type { ExtractionInput, FactExtractor, ThreadContext } from './port.js';
export { type Preprocessed, preprocess, summarizeThreadContext } from './preprocess.js';
export { selectFacts } from './select.js';
