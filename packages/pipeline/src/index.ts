export * from './entities/index.js';
export { ANSWER_WINDOW_MS, answeredQuestion, type FlowMessage } from './facts/answers.js';
export {
  LLM_MAX_FACTS_PER_MESSAGE,
  LlmFactAnswer,
  LlmFactExtractor,
  type LlmFactExtractorOptions,
  type LlmFactExtractorStats,
  toFacts,
} from './facts/llm-extractor.js';
export { OfflineFactExtractor } from './facts/offline-extractor.js';
export type { ExtractionInput, FactExtractor, ThreadContext } from './facts/port.js';
export { type Preprocessed, preprocess, summarizeThreadContext } from './facts/preprocess.js';
export { selectFacts } from './facts/select.js';
export * from './lifecycle/index.js';
