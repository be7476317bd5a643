export * from './config.js';
export * from './domain.js';
export * from './errors.js';
export * from './events.js';
export * from './ids.js';
