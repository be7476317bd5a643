export { type TestDatabase, testDatabases } from '@atlas/db/testing';

/** Polls `fn` until it returns true; throws with `what` after `timeoutMs`. Tests wait for events, not time. */
export const waitFor = async (
  fn: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> => {
  const until = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};
