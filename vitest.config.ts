import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The fault-injection suite stops and starts Kafka and Neo4j, which other server suites use at the same time: it is a
 * project of its own in a later group (sequence.groupOrder), so it starts after every other suite has finished.
 */
const FAULTS = 'test/fault-injection*.test.ts';
/**
 * The web UI suite imports two real exports and drives Chromium beside a real server: it is a project of its own in
 * the last group, so its load does not slow the timing-sensitive suites (the vector-space rebuild, Kafka, faults).
 */
const WEB = 'test/web/**/*.test.ts';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'atlas',
          include: ['packages/*/src/**/*.test.ts', 'services/*/src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, FAULTS, WEB],
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'faults', include: [FAULTS], sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: 'web', include: [WEB], sequence: { groupOrder: 2 } } },
    ],
  },
});
