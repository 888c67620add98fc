/**
 * The scripts of AGENTIC checks: assembled from the statements of the model's successful tool calls
 * (a browser check script of the PLAIN shape: `page` and `expect` in scope), the unified diff of a
 * change, and which failures of a stored script a repair may fix.
 */
import { createTwoFilesPatch } from 'diff';
import type { BrowserRunError } from '../../browser/messages.js';
import type { BrowserCheckResult } from '../../protocol/index.js';

/** The first line of every script an agentic run writes. */
const HEADER = '// Written by an Outpost agentic check from its prompt; a repair may rewrite it.';
/**
 * The second: actions wait 10 s for their element rather than Playwright's 30 s, so a replay whose
 * locator no longer matches fails early enough in the run to leave time for a repair.
 */
const TIMEOUT_LINE = 'page.setDefaultTimeout(10_000);';

/**
 * A PLAIN browser-check script of `statements` (each one line, in order), after `prefix` (the lines a
 * repair kept of the script it repaired, without the header).
 */
export function assembleScript(statements: string[], prefix: string[] = []): string {
  const body = [...prefix.filter((l) => l !== HEADER && l !== TIMEOUT_LINE), ...statements];
  return `${[HEADER, TIMEOUT_LINE, ...body].join('\n')}\n`;
}

/** The unified diff from `before` (empty for a first script) to `after`, with the versions as file names. */
export function scriptDiff(before: string, after: string, baseVersion: number): string {
  return createTwoFilesPatch(
    baseVersion === 0 ? '/dev/null' : `script-v${baseVersion}.js`,
    `script-v${baseVersion + 1}.js`,
    before,
    after,
  );
}

/**
 * Whether a failed replay is one a repair may fix: an action's element no longer found or not
 * actionable in time (a TIMEOUT or a SCRIPT error of a locator), as opposed to a failed `expect` on a
 * page that loaded (the check's assertion: a genuine failure), a page that did not load (the site is
 * down) or a run that did not report.
 */
export function repairable(result: BrowserCheckResult | undefined): BrowserRunError | null {
  if (result === undefined) return null;
  const failing = result.errors.filter(
    (e) => e.kind === 'ASSERTION' || e.kind === 'SCRIPT' || e.kind === 'TIMEOUT',
  );
  const first = failing[0];
  if (first === undefined || first.kind === 'ASSERTION') return null;
  const text = `${first.message}\n${first.detail ?? ''}`;
  if (/net::ERR_|page\.goto|NS_ERROR|ECONNREFUSED/.test(text)) return null;
  if (first.kind === 'TIMEOUT') return /locator|waiting for|getBy/i.test(text) ? first : null;
  return /strict mode violation|locator\.|waiting for (locator|getBy)|element is not|resolved to/i.test(text)
    ? first
    : null;
}

/**
 * The lines of `script` a repair keeps: those before `line` (1-based, where the old script failed),
 * without its header. Empty when the line is unknown.
 */
export function linesBefore(script: string, line: number | null): string[] {
  if (line === null || line < 2) return [];
  return script
    .split('\n')
    .slice(0, line - 1)
    .filter((l) => l !== HEADER && l.trim() !== '');
}
