export * from './documents.js';
export * from './embeddings.js';
export * from './facts.js';
export * from './graph.js';
export * from './keyword.js';
export * from './runtime.js';
export * from './sync/index.js';
export * from './wiki.js';
