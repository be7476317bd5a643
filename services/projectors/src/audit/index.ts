export * from './audit.js';
