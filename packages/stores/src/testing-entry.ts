/** Test helpers shared by the suites of other packages (not used at run time). */
export * from './test-fixtures.js';
export * from './testing.js';
