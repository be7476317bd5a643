export * from './batch.js';
export * from './cache.js';
export * from './citations.js';
export * from './clusters.js';
export * from './generate.js';
export * from './rank.js';
export * from './render.js';
export * from './summarize.js';
export type * from './types.js';
