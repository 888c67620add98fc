import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/common/errors.js';
import { PACKAGE_ROOT } from '../../src/common/paths.js';

describe('docs/errors.md', () => {
  it('documents every error code', () => {
    const doc = readFileSync(join(PACKAGE_ROOT, 'docs/errors.md'), 'utf8');
    const missing = Object.keys(ERROR_CODES).filter((code) => !doc.includes(`\`${code}\``));
    expect(missing).toEqual([]);
  });
});
