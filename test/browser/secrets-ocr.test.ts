import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chromiumRequirement,
  missingRequirement,
  runtimeRequirement,
  tesseractRequirement,
} from '../helpers/requirements.js';
import { unzip } from './formats.js';
import {
  type Loopback,
  payloadFor,
  RUNTIME_ID,
  runCheck,
  serve,
  startBrowser,
  type WarmBrowser,
} from './runner-harness.js';

/**
 * Secrets typed into a page stay out of the pixels the runner captures: a journey types a
 * planted secret into text fields (fill, pressSequentially, keyboard.type) and a password field,
 * and OCR of the failure screenshot, of the script's own screenshot and of the trace's last
 * screencast frame reads the page's visible text (an ordinary value typed the same way included)
 * but never the secret.
 */
const skip = missingRequirement([
  chromiumRequirement(),
  runtimeRequirement(RUNTIME_ID),
  tesseractRequirement(),
]);

/** Letters OCR reads reliably in a large sans font, and nothing the page shows otherwise. */
const SECRET = 'QUARTZ7ZEBRA';
const VISIBLE = 'MAPLE4HARBOR';

/** Upper-case letters and digits of what tesseract reads in `image`. */
function ocr(image: Buffer, dir: string, name: string): string {
  const file = join(dir, name);
  writeFileSync(file, image);
  const text = execFileSync('tesseract', [file, 'stdout'], { encoding: 'utf8', timeout: 20_000 });
  return text.toUpperCase().replace(/[^A-Z0-9]/g, '');
}

describe.skipIf(skip)('secrets in screenshots', () => {
  let browser: WarmBrowser;
  let web: Loopback;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-ocr-'));
    [browser, web] = await Promise.all([
      startBrowser(),
      serve((_req, res) => {
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end(`<!doctype html><title>Login</title>
<style>
  body { margin: 30px; font: 32px "Liberation Sans", sans-serif; background: #fff; color: #000 }
  input { display: block; margin: 12px 0 28px; width: 560px; height: 56px; font: 40px "Liberation Sans", sans-serif; border: 2px solid #000 }
</style>
<h1>Account settings</h1>
<label for="name">Display name</label><input id="name" autocomplete="off">
<label for="token">API token</label><input id="token" autocomplete="off">
<label for="password">Password</label><input id="password" type="password" autocomplete="off">
<label for="code">Recovery code</label><input id="code" autocomplete="off">`);
      }),
    ]);
  });

  afterAll(async () => {
    await web?.close();
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('OCR of the failure screenshot, the script’s own screenshot and the trace reads the page but not the secret', async () => {
    const code = [
      `import { test, expect } from '@playwright/test';`,
      `test('journey', async ({ page }) => {`,
      `  await page.goto('${web.origin}/');`,
      `  await page.locator('#name').fill('${VISIBLE}');`,
      `  await page.locator('#token').pressSequentially(process.env.SERVICE_SECRET_TOKEN);`,
      `  await page.fill('#password', process.env.SERVICE_SECRET_TOKEN);`,
      `  await page.click('#code');`,
      `  await page.keyboard.type('code ' + process.env.SERVICE_SECRET_TOKEN);`,
      `  await page.screenshot({ path: 'journey.png' });`,
      `  await expect(page.locator('h1')).toHaveText('Billing', { timeout: 300 });`,
      `});`,
    ].join('\n');
    const { outcome, files } = await runCheck(
      payloadFor(browser.wsEndpoint, code, { env: { SERVICE_SECRET_TOKEN: SECRET }, secrets: [SECRET] }),
    );
    expect(outcome.report?.status).toBe('FAILED');
    expect(outcome.report?.errors[0]?.kind).toBe('ASSERTION');
    expect(outcome.artifacts.map((a) => [a.name, a.kind]).sort()).toEqual([
      ['failure.png', 'SCREENSHOT'],
      ['journey.png', 'SCREENSHOT'],
      ['trace.zip', 'TRACE'],
    ]);

    const trace = unzip(files.get('trace.zip')!);
    const frames = [...trace.keys()].filter((name) => name.endsWith('.jpeg')).sort();
    expect(frames.length).toBeGreaterThan(0);
    const images: Array<[string, Buffer]> = [
      ['failure.png', files.get('failure.png')!],
      ['journey.png', files.get('journey.png')!],
      ['frame.jpeg', trace.get(frames.at(-1)!)!],
    ];
    for (const [name, image] of images) {
      const text = ocr(image, dir, name);
      // The page's own text and a value typed the same way are read: OCR would find the secret.
      expect(text, name).toContain('ACCOUNTSETTINGS');
      if (name !== 'frame.jpeg') expect(text, name).toContain(VISIBLE);
      expect(text, name).not.toContain(SECRET);
      expect(text, name).not.toContain(SECRET.slice(0, 6));
      expect(text, name).not.toContain(SECRET.slice(-5));
    }
  });
});
