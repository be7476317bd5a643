export * from './commands/import.js';
export * from './commands/search.js';
export * from './lock.js';
