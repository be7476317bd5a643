export * from './app.js';
export * from './graph-expansion.js';
export * from './ports.js';
export * from './search.js';
