/** Readers of shared data sets for the suites and benchmarks of other workspaces (`@atlas/pipeline/testing`; not used at run time). */

export * from './lifecycle/bench.js';
export * from './locomo.js';
