export { STAGE_BANDS } from './job-state.js';
export * from './stage-wait.js';
export * from './sync-job.js';
export * from './sync-jobs.js';
export * from './sync-scheduler.js';
export * from './sync-schedules.js';
export * from './sync-worker.js';
