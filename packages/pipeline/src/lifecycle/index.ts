export { dueDateOf, isProposal, isRevert, type LifecycleCue, messageCues } from './cues.js';
export * from './derive.js';
