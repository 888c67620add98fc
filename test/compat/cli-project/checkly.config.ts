// @ts-nocheck: typechecked by the Checkly CLI, which brings the `checkly` package (test/compat/checkly-cli.test.ts).
import { defineConfig } from 'checkly';

// The project `checkly deploy` sends to Outpost in test/compat/checkly-cli.test.ts.
export default defineConfig({
  projectName: 'Outpost CLI fixture',
  logicalId: 'outpost-cli-fixture',
  repoUrl: 'https://example.com/outpost/cli-fixture',
  checks: {
    frequency: 10,
    locations: ['eu-west-1'],
    runtimeId: '2026.04',
    checkMatch: '**/__checks__/**/*.check.ts',
    browserChecks: { testMatch: '**/__checks__/**/*.spec.ts' },
  },
  cli: { runLocation: 'eu-west-1' },
});
