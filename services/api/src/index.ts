export * from './app.js';
export * from './ports.js';
export * from './search.js';
