import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestService, testService } from '../../helpers/service.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

let svc: TestService;
let dir: string;
let doc: Record<string, unknown>;
beforeAll(async () => {
  svc = await testService();
  dir = await mkdtemp(join(tmpdir(), 'outpost-openapi-'));
  const res = await svc.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});
afterAll(async () => {
  await svc.close();
  await rm(dir, { recursive: true, force: true });
});

type Problem = { ruleId: string; severity: string; message: string; location: { pointer?: string }[] };

/**
 * Runs the repository's `redocly lint` (@redocly/cli) on `file` with its redocly.yaml (the `recommended` rules);
 * its exit code, JSON report and output.
 */
async function redoclyLint(file: string): Promise<{ code: number; problems: Problem[]; output: string }> {
  const args = ['lint', file, '--config', 'redocly.yaml', '--format', 'json'];
  const env = {
    ...process.env,
    REDOCLY_TELEMETRY: 'off',
    REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
    NO_COLOR: '1',
  };
  const { code, stdout, stderr } = await run(join(ROOT, 'node_modules', '.bin', 'redocly'), args, {
    cwd: ROOT,
    env,
    maxBuffer: 64 * 1024 * 1024,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code?: number; stdout?: string; stderr?: string }) => ({
      code: err.code ?? -1,
      stdout: err.stdout ?? '',
      stderr: err.stderr ?? '',
    }),
  );
  const json = stdout.slice(stdout.indexOf('{'));
  const problems = (JSON.parse(json) as { problems: Problem[] }).problems;
  return { code, problems, output: `${stdout}\n${stderr}` };
}

describe('GET /openapi.json and redocly', () => {
  it("passes redocly's recommended rules with no error and no warning", async () => {
    const file = join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(doc, null, 2));
    const { code, problems, output } = await redoclyLint(file);
    const report = problems.map(
      (p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`,
    );
    expect(report, output.slice(-4000)).toEqual([]);
    expect(code, output.slice(-4000)).toBe(0);
  }, 120_000);

  it('fails a document that breaks a recommended rule', async () => {
    const broken = structuredClone(doc) as { paths: Record<string, Record<string, Record<string, unknown>>> };
    const get = broken.paths['/v1/checks/{id}']?.get as Record<string, unknown>;
    delete get.operationId;
    delete get.summary;
    const file = join(dir, 'broken.json');
    await writeFile(file, JSON.stringify(broken));
    const { code, problems } = await redoclyLint(file);
    expect(problems.map((p) => p.ruleId).sort()).toEqual(['operation-operationId', 'operation-summary']);
    expect(code).not.toBe(0);
  }, 120_000);
});
