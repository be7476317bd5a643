export * from './app.js';
export * from './ask/engine.js';
export * from './ask/llm.js';
export * from './ask/router.js';
export * from './ask/stream-rules.js';
export * from './graph-expansion.js';
export * from './ports.js';
export * from './search.js';
