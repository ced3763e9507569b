import { defineConfig } from 'vitest/config';

// Two projects, run one after the other. `unit` (files named *.unit.test.ts) needs no server, no
// database and no bundle: it starts at once and runs first, so a broken rule fails in seconds.
// `integration` (int, e2e, contract, fault) keeps the global setup that builds embedded/dist and
// makes the template data directory, which only those tiers read. Test files run in forked
// processes, not threads: a few tests switch the effective uid, which a worker thread would share.
// Unit files share one process (isolate: false), which halves the tier's time because the modules
// are loaded once; they hold no global state between files (no mocks, no env changes, no timers
// left running), and a unit file that needs its own process belongs to another tier. The number of
// workers stays vitest's default (cores - 1, so one on a 2-core machine): each e2e file boots its
// own Bindery processes, so a second worker on two cores would only make them compete for CPU.
export default defineConfig({
  test: {
    exclude: ['**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
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
