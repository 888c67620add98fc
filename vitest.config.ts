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
 * The web app's and the status pages' screens in Chromium (the `.test.ts` files of `test/web`). Each file starts
 * its own service or `outpost up` (ports chosen by the kernel, a temp data folder, run users claimed machine-wide)
 * and its own browser (a temp profile), and reads no network namespace, nft table or list of the machine's
 * processes that another file could change. They wait on the browser far more than they compute (the status
 * page's file: 48 s of CPU in 96 s), so they run in the first group, two at a time like the in-process files,
 * instead of one at a time in the system lane's queue; the system lane's files, which count Chromium processes
 * machine-wide, start after them.
 */
const WEB_BROWSER = ['test/web/**/*.test.ts'];

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

/**
 * Files of the first group (in-process, postgres, web-dom, web-browser) run two at a time, one per core of this
 * machine: with three, the load reached 6 and timing tests (a heartbeat's grace, an axe pass within its minute)
 * failed. Vitest requires one number for every project of a group.
 */
const FIRST_GROUP_WORKERS = 2;

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
          maxWorkers: FIRST_GROUP_WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'web-browser',
          include: WEB_BROWSER,
          exclude: EXCLUDED,
          maxWorkers: FIRST_GROUP_WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'system',
          include: ['test/**/*.test.ts'],
          exclude: [...IN_PROCESS, ...WEB_BROWSER, ...EXCLUDED],
          // Network-namespace, executor and end-to-end tests share kernel state (netns names, nft
          // tables, process tables) and time their work: their files run one at a time, after
          // the in-process ones.
          fileParallelism: false,
          maxWorkers: 1,
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
                maxWorkers: FIRST_GROUP_WORKERS,
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
          maxWorkers: FIRST_GROUP_WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
    ],
  },
});
