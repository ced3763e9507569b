import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Two projects, run one after the other. `unit` (files named *.unit.test.ts) needs no server, no
// database and no bundle: it starts at once and runs first, so a broken rule fails in seconds.
// `integration` (int, e2e, contract, fault) keeps the global setup that builds embedded/dist and
// makes the template data directory, which only those tiers read. Test files run in forked
// processes, not threads: a few tests switch the effective uid, which a worker thread would share.
// Unit files share one process (isolate: false), which halves the tier's time because the modules
// are loaded once; they hold no global state between files (no mocks, no env changes, no timers
// left running), and a unit file that needs its own process belongs to another tier. Two workers at
// least (cores - 1 above that): one worker on two cores left a third of the machine idle while a
// file waited on its processes, a browser or a JVM (32 min against 24 min for the whole suite,
// decision 94). A test has 60 s: the long browser flows take twice their time beside another file.
export default defineConfig({
  test: {
    exclude: ['**/node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['**/test/**/*.unit.test.ts'], isolate: false, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['**/test/**/*.test.ts'],
          exclude: ['**/node_modules/**', '**/*.unit.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
