import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/common/paths.js';

/**
 * The first fenced code block under `heading` in `docs/<doc>`, as the reader copies it: the text between
 * the fences, before the next heading of any level. Tests run these blocks as written, so a doc's commands
 * cannot drift from what works.
 * @throws Error naming the doc and heading when the heading or its block is missing.
 */
export function codeBlockUnder(doc: string, heading: string): string {
  const lines = readFileSync(join(PACKAGE_ROOT, 'docs', doc), 'utf8').split('\n');
  const start = lines.findIndex((l) => /^#{1,6}\s/.test(l) && l.replace(/^#+\s+/, '').trim() === heading);
  if (start === -1) throw new Error(`docs/${doc} has no heading "${heading}"`);
  const block: string[] = [];
  let inside = false;
  for (const line of lines.slice(start + 1)) {
    if (!inside && /^#{1,6}\s/.test(line)) break;
    if (/^```/.test(line)) {
      if (inside) return `${block.join('\n')}\n`;
      inside = true;
      continue;
    }
    if (inside) block.push(line);
  }
  throw new Error(`docs/${doc}, "${heading}" has no fenced code block`);
}
