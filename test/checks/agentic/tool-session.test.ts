import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserPool } from '../../../src/browser/pool.js';
import { BrowserRunner } from '../../../src/browser/runner-process.js';
import { type Loopback, serve } from '../../browser/runner-harness.js';
import { processesUnder } from '../../helpers/processes.js';
import { chromiumRequirement, missingRequirement, runtimeRequirement } from '../../helpers/requirements.js';

/**
 * The browser tool session on its own: a runner of the pool (a run user, not the agent's uid) answers
 * tool calls with the statements that repeat them; what it sends back is already scrubbed of the
 * session's secrets (the agent's own scrubbing is not involved here); a tool that does not answer in
 * time ends the session with its runner killed.
 */
const skip = missingRequirement([chromiumRequirement(), runtimeRequirement('2026.04')]);

const SECRET = 'Tool-session-s3cret-value';
let site: Loopback;
let root: string;
let pool: BrowserPool<BrowserRunner>;

const ACCOUNT = '00000000-0000-4000-8000-0000000000bb';

describe.skipIf(skip !== null)('browser tool session', () => {
  beforeAll(async () => {
    site = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      // The page shows what was typed: a snapshot after the fill would carry the secret.
      res.end(`<!doctype html><title>Echo</title><label>Token <input id="t"></label><p id="out"></p>
        <button onclick="document.getElementById('out').textContent = 'You typed ' + document.getElementById('t').value">Show</button>`);
    });
    root = mkdtempSync(join(tmpdir(), 'outpost-tools-'));
    chmodSync(root, 0o755);
    pool = new BrowserPool<BrowserRunner>({
      createRunner: (options) => BrowserRunner.spawn(options),
      tmpRoot: root,
      browserConcurrency: 1,
      readHeadroom: async () => null,
    });
  }, 60_000);

  afterAll(async () => {
    await pool?.close();
    await site?.close();
    expect(processesUnder(root)).toEqual([]);
    rmSync(root, { recursive: true, force: true });
  }, 30_000);

  it('runs tools in a runner of another uid and sends statements and scrubbed answers', async () => {
    const lease = await pool.acquire('2026.04', { accountId: ACCOUNT, signal: AbortSignal.timeout(60_000) });
    try {
      const uid = Number(
        /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${lease.runner.pid}/status`, 'utf8'))?.[1],
      );
      expect(uid).not.toBe(process.getuid?.());
      const tools = lease.runner.toolSession({
        wsEndpoint: lease.wsEndpoint,
        env: { TOKEN: SECRET, SITE: site.origin },
        secrets: [SECRET],
        actionTimeoutMs: 3_000,
        maxOutputChars: 16_000,
      });
      const nav = await tools.call('navigate', { url: '{{SITE}}/' }, 30_000);
      expect(nav.ok, nav.output).toBe(true);
      expect(nav.code).toBe(`await page.goto(\`\${process.env.SITE}/\`);`);
      expect(nav.output).toContain('button "Show"');
      const fill = await tools.call('fill', { target: { label: 'Token' }, value: '{{TOKEN}}' }, 30_000);
      expect(fill.code).toBe("await page.getByLabel('Token').fill(process.env.TOKEN);");
      const click = await tools.call('click', { target: { role: 'button', name: 'Show' } }, 30_000);
      expect(click.code).toBe("await page.getByRole('button', { name: 'Show' }).click();");
      // The page now shows the secret; the runner's answer has it replaced before it left.
      expect(click.output).toContain('You typed');
      expect(click.output).not.toContain(SECRET);
      const verify = await tools.call('verify_text_visible', { text: 'You typed' }, 30_000);
      expect(verify).toMatchObject({
        ok: true,
        code: "await expect(page.getByText('You typed').first()).toBeVisible();",
      });
      const missing = await tools.call('verify_text_visible', { text: 'Not on the page' }, 30_000);
      expect(missing.ok).toBe(false);
      expect(missing.output).toMatch(/^Not verified/);
      const gone = await tools.call('click', { target: { role: 'link', name: 'Nowhere' } }, 30_000);
      expect(gone).toMatchObject({ ok: false, code: null });
      expect(gone.output).toMatch(/Timeout 3000ms/);
      const bad = await tools.call('click', { target: { role: 'Button; alert(1)' } }, 30_000);
      expect(bad.output).toMatch(/ARIA role/);
      expect(tools.alive).toBe(true);
      await tools.close();
    } finally {
      await lease.release({ browserFailed: false });
    }
  }, 90_000);

  it('a tool that does not answer in time ends the session and its runner', async () => {
    const lease = await pool.acquire('2026.04', { accountId: ACCOUNT, signal: AbortSignal.timeout(60_000) });
    try {
      const tools = lease.runner.toolSession({
        wsEndpoint: lease.wsEndpoint,
        env: {},
        secrets: [],
        actionTimeoutMs: 3_000,
        maxOutputChars: 16_000,
      });
      const nav = await tools.call('navigate', { url: `${site.origin}/` }, 30_000);
      expect(nav.ok, nav.output).toBe(true);
      // The wait takes its 3 s action timeout; the agent's 1 s deadline for the answer comes first.
      const t0 = performance.now();
      const hung = await tools.call('wait_for_text', { text: 'never on the page' }, 1_000);
      expect(performance.now() - t0).toBeLessThan(2_500);
      expect(hung.ok).toBe(false);
      expect(hung.output).toMatch(/did not answer within 1000 ms/);
      expect(tools.alive).toBe(false);
      await lease.runner.closed;
      expect(lease.runner.alive).toBe(false);
      const after = await tools.call('snapshot', {}, 1_000);
      expect(after.output).toMatch(/session ended/);
    } finally {
      await lease.release({ browserFailed: true });
    }
  }, 90_000);
});
