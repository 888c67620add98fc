import { readdirSync, readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import { postgresBinDir } from './test/helpers/postgres.js';

/**
 * Tests that run in one process each with an in-memory (or temp-dir) store and ports chosen by the
 * kernel: nothing shared, so two run at once.
 */
const IN_PROCESS = [
  'test/service/**/*.test.ts',
  'test/common/**/*.test.ts',
  'test/protocol/**/*.test.ts',
  'test/docs/**/*.test.ts',
  'test/deploy/**/*.test.ts',
  'test/layering.test.ts',
];

/**
 * Globs of test files left out of this run, comma-separated (`OUTPOST_TEST_EXCLUDE`); `.ci/run` uses it for
 * its second-runtime pass (see there). Empty: every test runs.
 */
const EXCLUDED = (process.env.OUTPOST_TEST_EXCLUDE ?? '')
  .split(',')
  .map((glob) => glob.trim())
  .filter(Boolean);

/**
 * The service tests whose stores come from the test helpers (`testService`, `testStore`): the `postgres`
 * project runs them again on PostgreSQL. A file that opens a SQLite store of its own (file modes, SQLite's
 * errors) tests that store and runs once.
 */
const STORE_CONTRACT = readdirSync('test/service', { recursive: true, encoding: 'utf8' })
  .filter((name) => name.endsWith('.test.ts'))
  .map((name) => `test/service/${name}`)
  .filter((file) => /\btest(Service|Store)\(/.test(readFileSync(file, 'utf8')));

/**
 * The `postgres` project runs when PostgreSQL is installed, and always under CI=true (its global setup then
 * fails the run if it is missing); elsewhere its absence is said once and the project left out.
 * `OUTPOST_TEST_POSTGRES=off` leaves it out on purpose (`.ci/run`'s first pass: it runs in the second).
 */
const POSTGRES =
  process.env.OUTPOST_TEST_POSTGRES !== 'off' && (process.env.CI === 'true' || postgresBinDir() !== null);
if (!POSTGRES && process.env.OUTPOST_TEST_POSTGRES !== 'off') {
  console.warn('skipping the postgres test project: PostgreSQL is missing (apt-get install postgresql)');
}

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'in-process',
          include: IN_PROCESS,
          exclude: EXCLUDED,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'system',
          include: ['test/**/*.test.ts'],
          exclude: [...IN_PROCESS, ...EXCLUDED],
          // Network-namespace, browser and end-to-end tests share kernel state (netns names, nft
          // tables, uids, processes) and time their work: their files run one at a time, after
          // the in-process ones.
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
      ...(POSTGRES
        ? [
            {
              extends: true as const,
              test: {
                name: 'postgres',
                include: STORE_CONTRACT,
                exclude: EXCLUDED,
                env: { OUTPOST_TEST_DATABASE: 'postgres' },
                globalSetup: ['test/helpers/postgres-setup.ts'],
                maxWorkers: 2,
                sequence: { groupOrder: 0 },
              },
            },
          ]
        : []),
      {
        extends: true,
        // The web app's components in jsdom (test/web/**/*.test.tsx), with the app's own JSX transform;
        // their API calls go to a real HTTP server on loopback (test/web/dom.ts).
        oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
        test: {
          name: 'web-dom',
          include: ['test/web/**/*.test.tsx'],
          exclude: EXCLUDED,
          environment: 'jsdom',
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
    ],
  },
});
