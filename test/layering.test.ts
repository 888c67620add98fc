import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The layering of src/ (docs/architecture.md, "Layering"):
 *
 *   common ← protocol ← net, sandbox, browser ← checks ← agent
 *
 * A layer imports only itself and the layers to its left; net, sandbox and browser, side by side, do not
 * import each other. The service imports only common, protocol and itself (never checks, agent,
 * net or sandbox). src/cli.ts, the entry point, may import every layer it starts: agent and
 * service, and common and protocol. Every import counts: static (types too), dynamic `import()`,
 * `export … from`, `import x = require()` and `require()`. The one import outside src/: the browser layer
 * may import from a pinned runtime's node_modules (runtimes/<id>/node_modules), whose Playwright it drives.
 *
 * Inside the service (docs/architecture.md, "Modules"): the platform imports nothing above it, and a module
 * imports the platform, the contract and other modules' `index.ts` only (brokenServiceRule).
 */
const LAYER_RANK = { common: 0, protocol: 1, net: 2, sandbox: 2, browser: 2, checks: 3, agent: 4 } as const;
type AgentLayer = keyof typeof LAYER_RANK;
type Layer = AgentLayer | 'service' | 'cli';

const SERVICE_MAY_IMPORT: readonly Layer[] = ['common', 'protocol', 'service'];
const CLI_MAY_IMPORT: readonly Layer[] = ['common', 'protocol', 'agent', 'service'];

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');

/** One import of a source file: the file (relative to the repository), what it names, and where that resolves. */
type SourceImport = { file: string; specifier: string; target: string };

/** The layer of a path under src/ (relative to the repository), or null for a path outside src/'s layers. */
function layerOf(path: string): Layer | null {
  const parts = path.split(/[\\/]/);
  if (parts[0] !== 'src') return null;
  if (parts.length === 2 && parts[1] === 'cli.ts') return 'cli';
  const top = parts[1] ?? '';
  if (top === 'service') return 'service';
  return top in LAYER_RANK ? (top as AgentLayer) : null;
}

/** The rule an import from `from` into `to` breaks, in words, or null when the layering allows it. */
function brokenRule(from: Layer, to: Layer | null): string | null {
  if (to === null) return 'src/ imports only its own layers';
  if (from === to) return null;
  if (from === 'cli') {
    return CLI_MAY_IMPORT.includes(to) ? null : `src/cli.ts imports only ${CLI_MAY_IMPORT.join(', ')}`;
  }
  if (from === 'service') {
    return SERVICE_MAY_IMPORT.includes(to) ? null : `service imports only ${SERVICE_MAY_IMPORT.join(', ')}`;
  }
  if (to === 'service' || to === 'cli') return `${from} never imports ${to}`;
  if (LAYER_RANK[to] === LAYER_RANK[from]) return `${from} and ${to} do not import each other`;
  if (LAYER_RANK[to] > LAYER_RANK[from]) {
    return `${from} imports only layers to its left (common ← protocol ← net, sandbox, browser ← checks ← agent), not ${to}`;
  }
  return null;
}

/**
 * Where a path under src/service/ sits (docs/architecture.md, "Modules"): the platform (`platform/…`), the
 * wiring at the root (`app.ts`, `context.ts`, `modules.ts`, `module.ts`, …) or a module (its folder's name).
 */
type ServicePart =
  | { kind: 'platform' }
  | { kind: 'root'; file: string }
  | { kind: 'module'; name: string; rest: string };

function servicePartOf(path: string): ServicePart | null {
  const parts = path.split('/');
  if (parts[0] !== 'src' || parts[1] !== 'service') return null;
  if (parts.length === 3) return { kind: 'root', file: (parts[2] ?? '').replace(/\.[cm]?[jt]s$/, '') };
  if (parts[2] === 'platform') return { kind: 'platform' };
  return { kind: 'module', name: parts[2] ?? '', rest: parts.slice(3).join('/') };
}

/** The contract and the context: what a module may import from the service's root. */
const ROOT_FILES_FOR_MODULES = ['module', 'context'];

/**
 * The rule an import inside the service breaks, or null: the platform imports nothing of the service above
 * it; a module imports the platform, itself, the contract (module.ts, context.ts) and other modules only
 * through their `index.ts`; the root wires everything.
 */
function brokenServiceRule(file: string, target: string): string | null {
  const from = servicePartOf(file);
  const to = servicePartOf(target);
  if (from === null || to === null || from.kind === 'root') return null;
  if (from.kind === 'platform') {
    return to.kind === 'platform' ? null : 'the service platform imports nothing of the service above it';
  }
  if (to.kind === 'platform') return null;
  if (to.kind === 'root') {
    return ROOT_FILES_FOR_MODULES.includes(to.file)
      ? null
      : `a module imports only ${ROOT_FILES_FOR_MODULES.map((f) => `${f}.ts`).join(' and ')} of the service's root`;
  }
  if (to.name === from.name) return null;
  return /^(index|schemas)\.[cm]?[jt]s$/.test(to.rest)
    ? null
    : 'a module imports another module only through its index.ts (or its published schemas.ts)';
}

/** The violations among `imports`, one line each: file, import, rule. */
function violations(imports: readonly SourceImport[]): string[] {
  const found: string[] = [];
  for (const { file, specifier, target } of imports) {
    const from = layerOf(file);
    if (from === null) continue;
    // The browser layer drives the pinned runtime's Playwright: its bootstraps import the runtime's types.
    if (from === 'browser' && /^runtimes\/[^/]+\/node_modules\//.test(target)) continue;
    const rule =
      brokenRule(from, layerOf(target)) ?? (from === 'service' ? brokenServiceRule(file, target) : null);
    if (rule !== null) found.push(`${file}: import '${specifier}' (→ ${target}) breaks "${rule}"`);
  }
  return found;
}

/** Every module specifier of `source`: imports and exports with `from`, `import()`, `import = require()`, `require()`. */
function specifiersOf(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteralLike(node.moduleReference.expression)
    ) {
      found.push(node.moduleReference.expression.text);
    } else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const isImport = callee.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = ts.isIdentifier(callee) && callee.text === 'require';
      const first = node.arguments[0];
      if ((isImport || isRequire) && first !== undefined && ts.isStringLiteralLike(first))
        found.push(first.text);
    } else if (ts.isImportTypeNode(node)) {
      const argument = node.argument;
      if (ts.isLiteralTypeNode(argument) && ts.isStringLiteral(argument.literal))
        found.push(argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(?:c|m)?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The relative imports of every source file under src/ (packages and `node:` modules are outside the layering). */
function importsOfSrc(): SourceImport[] {
  return sourceFiles(SRC).flatMap((path) => {
    const file = relative(ROOT, path).split(sep).join('/');
    return specifiersOf(path, readFileSync(path, 'utf8'))
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => ({
        file,
        specifier,
        target: relative(ROOT, resolve(dirname(path), specifier))
          .split(sep)
          .join('/'),
      }));
  });
}

/**
 * Where SQL may be written in the service (docs/architecture.md, "Modules" and "Adding a resource"): a class
 * that holds SQL is a `<Thing>Queries` class in a module's store file; rules classes call it. Allowed:
 * - `src/service/platform/store/…`: the store itself (database, migrations, retention, secrets at rest,
 *   accounts);
 * - files named `store.ts`, `*-store.ts`, `*queries.ts` (`page-queries.ts`, …);
 * - files named `retention.ts`: retention tasks run deletes by design (docs/architecture.md, "Retention");
 * - `src/service/analytics/query.ts`: the analytics module's store-like file. A query builder is the
 *   module's purpose: it builds its one aggregate statement with kysely's `sql` template (run here or in
 *   the reader threads of workers.ts), so it is the module's store under another name.
 */
const SQL_FILE_ALLOWED = [
  /^src\/service\/platform\/store\//,
  /\/(?:store|[^/]+-store|[^/]*queries|retention)\.ts$/,
  /^src\/service\/analytics\/query\.ts$/,
];

/** A kysely statement (`.selectFrom(` … `.mergeInto(`) or a kysely `sql` template (`sql\`…\``, `sql<T>\`…\``). */
const SQL_IN_SOURCE =
  /\.(?:selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\s*\(|\bsql\s*(?:<[^`;]*?>\s*)?`/;

/** The files (relative to the repository) among `files` that hold SQL and may not: one line each. */
function sqlOutsideStores(files: readonly { file: string; source: string }[]): string[] {
  return files
    .filter(({ file, source }) => SQL_IN_SOURCE.test(source) && !SQL_FILE_ALLOWED.some((re) => re.test(file)))
    .map(({ file }) => `${file}: SQL outside a store file (move it into a <Thing>Queries class in store.ts)`);
}

describe('layering of src/', () => {
  it('every import runs along the layering (common ← protocol ← net, sandbox, browser ← checks ← agent; service on common and protocol)', () => {
    const imports = importsOfSrc();
    expect(imports.length).toBeGreaterThan(100);
    expect(violations(imports), violations(imports).join('\n')).toEqual([]);
  });

  it("a module's published schemas (src/service/<module>/schemas.ts) need nothing but TypeBox: the web app imports them", () => {
    const entries = readdirSync(join(SRC, 'service'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(SRC, 'service', entry.name, 'schemas.ts'))
      .filter((path) => existsSync(path));
    expect(entries.length).toBeGreaterThanOrEqual(5);
    const outside: string[] = [];
    const seen = new Set<string>();
    const walk = (path: string): void => {
      if (seen.has(path)) return;
      seen.add(path);
      for (const specifier of specifiersOf(path, readFileSync(path, 'utf8'))) {
        if (specifier.startsWith('.')) walk(resolve(dirname(path), specifier).replace(/\.js$/, '.ts'));
        else if (!specifier.startsWith('@sinclair/typebox'))
          outside.push(`${relative(ROOT, path)} imports '${specifier}'`);
      }
    };
    for (const entry of entries) walk(entry);
    expect(outside, outside.join('\n')).toEqual([]);
  });

  it('finds every kind of import', () => {
    const source = [
      "import a from './a.js';",
      "import type { B } from './b.js';",
      "export { c } from './c.js';",
      "export * from './d.js';",
      "import e = require('./e.js');",
      "const f = await import('./f.js');",
      "const g = require('./g.js');",
      "type H = import('./h.js').H;",
    ].join('\n');
    expect(specifiersOf('x.ts', source)).toEqual([
      './a.js',
      './b.js',
      './c.js',
      './d.js',
      './e.js',
      './f.js',
      './g.js',
      './h.js',
    ]);
  });

  it.each([
    ['src/net/http/request.ts', '../../agent/agent.js', 'src/agent/agent.js'],
    ['src/net/pcap/scrub.ts', '../../sandbox/sandbox.js', 'src/sandbox/sandbox.js'],
    ['src/sandbox/sandbox.ts', '../net/resolve.js', 'src/net/resolve.js'],
    ['src/common/logger.ts', '../protocol/index.js', 'src/protocol/index.js'],
    ['src/checks/url/executor.ts', '../../agent/execute.js', 'src/agent/execute.js'],
    ['src/service/runs/queue/jobs.ts', '../../checks/api/executor.js', 'src/checks/api/executor.js'],
    ['src/service/app.ts', '../agent/main.js', 'src/agent/main.js'],
    ['src/agent/main.ts', '../service/main.js', 'src/service/main.js'],
    ['src/cli.ts', './checks/registry.js', 'src/checks/registry.js'],
    ['src/agent/main.ts', '../../bench/run.js', 'bench/run.js'],
    ['src/service/platform/store/schema.ts', '../../checks/checks.js', 'src/service/checks/checks.js'],
    ['src/service/platform/http/auth.ts', '../../context.js', 'src/service/context.js'],
    ['src/service/alerting/recorder.ts', '../checks/store.js', 'src/service/checks/store.js'],
    ['src/service/checks/routes.ts', '../app.js', 'src/service/app.js'],
  ])('refuses %s importing %s', (file, specifier, target) => {
    expect(violations([{ file, specifier, target }])).toHaveLength(1);
  });

  it.each([
    ['src/agent/main.ts', '../checks/registry.js', 'src/checks/registry.js'],
    ['src/checks/api/executor.ts', '../../sandbox/types.js', 'src/sandbox/types.js'],
    ['src/net/pcap/scrub.ts', '../../common/scrub.js', 'src/common/scrub.js'],
    ['src/service/runs/queue/jobs.ts', '../../protocol/index.js', 'src/protocol/index.js'],
    ['src/cli.ts', './service/main.js', 'src/service/main.js'],
    ['src/service/alerting/recorder.ts', '../checks/index.js', 'src/service/checks/index.js'],
    [
      'src/service/resources/check-groups/schema.ts',
      '../../checks/schemas.js',
      'src/service/checks/schemas.js',
    ],
    [
      'src/service/alerting/recorder.ts',
      '../platform/store/schema.js',
      'src/service/platform/store/schema.js',
    ],
    ['src/service/checks/routes.ts', '../module.js', 'src/service/module.js'],
    ['src/service/app.ts', './checks/store.js', 'src/service/checks/store.js'],
  ])('allows %s importing %s', (file, specifier, target) => {
    expect(violations([{ file, specifier, target }])).toEqual([]);
  });

  it("SQL only in the service's store files", () => {
    const files = sourceFiles(join(SRC, 'service')).map((path) => ({
      file: relative(ROOT, path).split(sep).join('/'),
      source: readFileSync(path, 'utf8'),
    }));
    expect(files.filter(({ source }) => SQL_IN_SOURCE.test(source)).length).toBeGreaterThan(10);
    const found = sqlOutsideStores(files);
    expect(found, found.join('\n')).toEqual([]);
  });

  it.each([
    ['src/service/checks/routes.ts', "await ctx.db.selectFrom('checks').selectAll().execute();"],
    ['src/service/platform/web/sessions.ts', "await db\n  .deleteFrom('web_sessions').execute();"],
    [
      'src/service/heartbeats/monitor.ts',
      "await tx.updateTable('heartbeats').set({ due_at: null }).execute();",
    ],
    ['src/service/analytics/api-checks.ts', 'const q = sql<{ n: number }>`SELECT 1 AS n`;'],
    ['src/service/status-pages/admin/subscribers.ts', 'await sql`DELETE FROM x`.execute(tx);'],
    ['src/service/runs/queue/jobs.ts', "await tx.insertInto('jobs').values(row).execute();"],
  ])('refuses SQL in %s', (file, source) => {
    expect(sqlOutsideStores([{ file, source }])).toHaveLength(1);
  });

  it.each([
    ['src/service/checks/store.ts', "await db.selectFrom('checks').selectAll().execute();"],
    ['src/service/runs/results/outbox-store.ts', "await db.insertInto('result_outbox').values(r).execute();"],
    ['src/service/status-pages/public/page-queries.ts', 'sql<number>`count(*)`'],
    ['src/service/status-pages/retention.ts', "await db.deleteFrom('status_page_subscribers').execute();"],
    ['src/service/platform/store/accounts.ts', "await db.insertInto('accounts').values(a).execute();"],
    ['src/service/analytics/query.ts', 'return sql<{ lo: number }>`SELECT 1`;'],
    ['src/service/checks/routes.ts', 'const s = new CheckQueries(ctx.db); // selectFrom, in a comment only'],
  ])('allows %s with %s', (file, source) => {
    expect(sqlOutsideStores([{ file, source }])).toEqual([]);
  });
});
