/** Test helpers for the suites of other workspaces (`@atlas/platforms/testing`; not used at run time). */
export * from './live/discord-emulator.test-support.js';
export * from './live/slack-emulator.test-support.js';
export * from './zip-writer.test-support.js';
