import { loadConfig } from '@atlas/core';
import { openRuntime } from './runtime.js';

/** A fresh in-memory embedded profile for projector tests, with a fast-polling log. */
export const openHarness = async () => {
  const rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://' }), {
    pollIntervalMs: 20,
    sessionTimeoutMs: 1000,
  });
  return { ...rt, log: rt.eventLog };
};
