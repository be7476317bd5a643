/** Test helpers for the suites of other workspaces (`@atlas/providers/testing`; not used at run time). */
export * from './llm/fake-openai-server.test-support.js';
