export * from './db.js';
export * from './migrate.js';
