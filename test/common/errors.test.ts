import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/common/errors.js';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import { SERVICE_ERROR_CODES } from '../../src/service/platform/http/error-codes.js';

const doc = readFileSync(join(PACKAGE_ROOT, 'docs/errors.md'), 'utf8');
const SERVICE_HEADING = '## HTTP errors of the service';

describe('docs/errors.md', () => {
  it('documents every error code', () => {
    const missing = Object.keys(ERROR_CODES).filter((code) => !doc.includes(`\`${code}\``));
    expect(missing).toEqual([]);
  });

  it('lists every code the service answers, with its status, in the service table', () => {
    expect(doc).toContain(SERVICE_HEADING);
    const section = doc.slice(doc.indexOf(SERVICE_HEADING));
    const rows = new Map(
      section
        .split('\n')
        .map((line) => /^\| `(OUTPOST_ERR_[A-Z_]+)` \| (\d{3}) /.exec(line))
        .filter((m) => m !== null)
        .map((m) => [m[1]!, Number(m[2])]),
    );
    const wrong = Object.entries(SERVICE_ERROR_CODES)
      .filter(([code, { status }]) => rows.get(code) !== status)
      .map(([code, { status }]) => `${code} ${status} (docs: ${rows.get(code) ?? 'missing'})`);
    expect(wrong).toEqual([]);
  });
});
