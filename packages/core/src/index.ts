export * from './breaker.js';
export * from './config.js';
export * from './credentials.js';
export * from './domain.js';
export * from './errors.js';
export * from './events.js';
export * from './ids.js';
export * from './sync.js';
