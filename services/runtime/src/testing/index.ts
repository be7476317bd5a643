/** Harnesses for the suites of other workspaces (`@atlas/runtime/testing`; not used at run time). */
export * from './atlas-server.js';
export * from './faults.js';
export * from './profiles.js';
export * from './projector-harness.js';
export * from './shape-harness.js';
export * from './sync-harness.js';
