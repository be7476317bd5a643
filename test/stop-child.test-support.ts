import type { ChildProcess } from 'node:child_process';

/**
 * Stops a spawned server and resolves once it has exited: SIGTERM, then SIGKILL after `graceMs` (default 20,000 ms) if
 * it is still running. A suite removes the server's data dir only after this: removing it while the server still
 * writes on its way down (PGlite's files, the event log) fails with ENOTEMPTY. Resolves at once when the child has
 * already exited or was never started.
 */
export const stopChild = async (child: ChildProcess | undefined, graceMs = 20_000): Promise<void> => {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
};
