/** Sample events for suites and scripts of other workspaces (`@atlas/eventlog/testing`; not used at run time). */
export * from './samples.js';
