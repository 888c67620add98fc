import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/common/paths.js';

/**
 * The repository's documentation stands on its own: every citation of a doc section in src/, README.md and
 * docs/ names a file and a heading that exist, every link into docs/ resolves, and nothing points at files
 * outside the repository.
 */

/** Every file under `dir` (relative to the package root), recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(join(PACKAGE_ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(PACKAGE_ROOT, join(entry.parentPath, entry.name)));
}

const DOCS = filesUnder('docs').filter((f) => f.endsWith('.md'));
/** Every file whose text may cite the docs: the README, the docs, and src/ (code and comments). */
const CITING = [
  'README.md',
  ...DOCS,
  ...filesUnder('src').filter((f) => /\.(ts|cts|mts|mjs|js|c|h)$/.test(f)),
];

const read = (file: string) => readFileSync(join(PACKAGE_ROOT, file), 'utf8');

/** The headings of a Markdown text (ATX `#` headings outside fenced code blocks), as written. */
function headingsOf(markdown: string): string[] {
  const headings: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const match = fenced ? null : /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (match) headings.push(match[1]!);
  }
  return headings;
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

type Citation = { file: string; doc: string; heading: string };

/**
 * Section citations in `text`: `docs/<doc>.md, "<heading>"`, `docs/<doc>.md ("<heading>")`, the Markdown
 * link forms `[<doc>.md](<doc>.md), "<heading>"`, and further headings joined by `and` or commas
 * (`docs/api.md, "Check" and "Limits"`).
 */
function citationsIn(file: string, text: string): Citation[] {
  const found: Citation[] = [];
  for (const match of text.matchAll(/\b(?:docs\/)?([a-z][a-z0-9-]*)\.md\)?(?:,| \()\s*"([^"\n]+)"/g)) {
    found.push({ file, doc: match[1]!, heading: match[2]! });
    const rest = text.slice(match.index + match[0].length);
    const more = /^(?:\s*(?:,|and|, and)\s*"[^"\n]+")+/.exec(rest);
    for (const extra of more?.[0].matchAll(/"([^"\n]+)"/g) ?? []) {
      found.push({ file, doc: match[1]!, heading: extra[1]! });
    }
  }
  return found;
}

/** What is wrong with `citations`: one line each, naming the citing file. */
function brokenCitations(citations: Citation[], headingsByDoc: Map<string, string[]>): string[] {
  return citations.flatMap(({ file, doc, heading }) => {
    const headings = headingsByDoc.get(doc);
    if (!headings) return [`${file}: docs/${doc}.md, "${heading}": there is no docs/${doc}.md`];
    return headings.includes(heading) ? [] : [`${file}: docs/${doc}.md, "${heading}": no such heading`];
  });
}

const headingsByDoc = new Map(DOCS.map((f) => [f.slice('docs/'.length, -'.md'.length), headingsOf(read(f))]));

describe('docs stand on their own', () => {
  it('finds the citations of every form (and would report a wrong one)', () => {
    const text = [
      '(docs/checks.md, "API")',
      'docs/checks.md ("Assertions")',
      '(docs/api.md, "Check" and "Limits")',
      '[checks.md](checks.md), "Status of a run"',
      '[docs/api.md](docs/api.md), "Nothing like this"',
      '(docs/nowhere.md, "API")',
    ].join('\n');
    const citations = citationsIn('sample', text);
    expect(citations.map((c) => `${c.doc}:${c.heading}`)).toEqual([
      'checks:API',
      'checks:Assertions',
      'api:Check',
      'api:Limits',
      'checks:Status of a run',
      'api:Nothing like this',
      'nowhere:API',
    ]);
    expect(brokenCitations(citations, headingsByDoc)).toEqual([
      'sample: docs/api.md, "Nothing like this": no such heading',
      'sample: docs/nowhere.md, "API": there is no docs/nowhere.md',
    ]);
  });

  it('every cited section exists: its file in docs/ and its heading in that file', () => {
    const citations = CITING.flatMap((file) => citationsIn(file, read(file)));
    // The source comments cite the docs by section; finding none would mean the pattern broke.
    expect(citations.length).toBeGreaterThan(50);
    expect(brokenCitations(citations, headingsByDoc)).toEqual([]);
  });

  it('every docs/<file>.md mentioned exists', () => {
    const missing = CITING.flatMap((file) =>
      [...read(file).matchAll(/\bdocs\/([a-z][a-z0-9-]*\.md)\b/g)]
        .filter((m) => !existsSync(join(PACKAGE_ROOT, 'docs', m[1]!)))
        .map((m) => `${file}: docs/${m[1]}`),
    );
    expect(missing).toEqual([]);
  });

  it('every Markdown link to a doc or a section resolves', () => {
    const broken: string[] = [];
    for (const file of ['README.md', ...DOCS]) {
      const dir = file === 'README.md' ? '' : 'docs';
      for (const m of read(file).matchAll(/\]\(((?:docs\/)?[a-z][a-z0-9-]*\.md)?(?:#([^)\s]+))?\)/g)) {
        const [, target, anchor] = m;
        if (target === undefined && anchor === undefined) continue;
        const doc = target === undefined ? file : join(dir, target);
        if (!existsSync(join(PACKAGE_ROOT, doc))) {
          broken.push(`${file}: ${m[0]}: no ${doc}`);
        } else if (anchor !== undefined && !headingsOf(read(doc)).map(anchorOf).includes(anchor)) {
          broken.push(`${file}: ${m[0]}: no heading with anchor #${anchor} in ${doc}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('nothing points at files outside the repository (../shared, design notes, the API contract, references)', () => {
    const outside =
      /\.\.\/shared|\bdesign\.md\b|\bservice-api\.md\b|\bstyle\.md\b|\breference\/[\w.-]+\.md\b/;
    const offending = CITING.flatMap((file) =>
      read(file)
        .split('\n')
        .flatMap((line, i) => (outside.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(offending).toEqual([]);
  });
});
