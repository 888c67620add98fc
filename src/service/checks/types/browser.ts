import { Type } from '@sinclair/typebox';
import { sharedCheckFields, zeroHeartbeat, zeroRequest } from './common.js';
import { IntegerEnum, Nullable } from '../../platform/http/schema-helpers.js';
import { badField } from '../../platform/http/errors.js';
import { validateBodyPart } from '../../platform/http/validation.js';

const strict = { additionalProperties: false } as const;

/**
 * Longest run of a browser or multi-step check, seconds, and its default: 240 s, the field's
 * figure, configurable per check up to it (docs/checks.md, "Browser, multi-step and Playwright check suites").
 */
export const BROWSER_TIMEOUT_SECONDS = 240;

/**
 * Longest run of a Playwright check suite, seconds, and its default: 30 minutes (docs/checks.md,
 * "Browser, multi-step and Playwright check suites"); the longest `timeoutSeconds` of any type.
 */
export const SUITE_TIMEOUT_SECONDS = 1800;

/** Minutes between runs of a browser check (docs/api.md, "Check": frequency, browser set; no sub-minute runs). */
export const BROWSER_FREQUENCIES = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const;

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';

/**
 * A fully qualified domain name: at least two dot-separated labels, the last
 * starting with a letter (so not an IP address), no trailing dot, no scheme or port.
 */
export const FQDN_PATTERN = `^(?:${LABEL}\\.)+[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`;

/**
 * One dependency file of a browser script: `path`, relative and inside the
 * check's directory (no leading `/`, no `..` segment, no backslash), and its
 * `content` (UTF-8 text).
 */
export const DependencySchema = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 1024, pattern: '^(?!/)(?!(?:.*/)?\\.\\.(?:/|$))[^\\\\]+$' }),
    content: Type.String({ maxLength: 131_072 }),
  },
  strict,
);

/** Most dependency files of a script check (browser, multi-step, Playwright check suite). */
export const MAX_DEPENDENCY_FILES = 100;

/** Dependency files of a script check: at most {@link MAX_DEPENDENCY_FILES} of DependencySchema. */
export const DependenciesSchema = Type.Array(DependencySchema, { maxItems: MAX_DEPENDENCY_FILES });

/** `timeoutSeconds`: whole seconds from 1 to `max`, default `max`. */
const timeoutSeconds = (max: number) =>
  Type.Optional(Type.Integer({ minimum: 1, maximum: max, default: max }));

/** Fields of every script check: `frequency` from BROWSER_FREQUENCIES (default 10), `sslCheckDomain` an FQDN, "" or null. */
const scriptCheckFields = {
  ...sharedCheckFields,
  request: zeroRequest,
  heartbeat: zeroHeartbeat,
  // Kept and answered as the hosted API does (the Terraform provider sends its defaults, 15 000 and 30 000, with
  // every check and reads them back), never used: a script check has no degraded state.
  degradedResponseTime: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 300_000 }))),
  maxResponseTime: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 300_000 }))),
  frequency: Type.Optional(IntegerEnum(BROWSER_FREQUENCIES, { default: 10 })),
  // "" is none, as the hosted API's clients send it.
  sslCheckDomain: Type.Optional(
    Nullable(Type.String({ maxLength: 253, pattern: `^$|${FQDN_PATTERN}`, default: null })),
  ),
};

/**
 * Body of `POST /v1/checks/browser` (docs/api.md, "Checks" and "Browser-specific fields"):
 * the shared check fields, `name` and `script` required (`script` is string or
 * null as docs/api.md says; at most 131 072 characters), `frequency` from
 * BROWSER_FREQUENCIES (default 10), `sslCheckDomain` an FQDN or null,
 * `dependencies` at most 100 files or null (default null), `timeoutSeconds` 1–240 (default 240).
 * No `request` or packet-loss fields; response-time thresholds are kept and answered, never used: browser checks
 * have no degraded state.
 */
export const CreateBrowserCheckBody = Type.Object(
  {
    ...scriptCheckFields,
    script: Nullable(Type.String({ maxLength: 131_072 })),
    dependencies: Type.Optional(
      Nullable(Type.Array(DependencySchema, { maxItems: MAX_DEPENDENCY_FILES, default: null })),
    ),
    timeoutSeconds: timeoutSeconds(BROWSER_TIMEOUT_SECONDS),
  },
  strict,
);

/**
 * Body of `POST /v1/checks/multistep`: the browser check's fields (a `@playwright/test` spec using
 * the `request` fixture and `test.step`); its runtime must have `multiStepSupport`, which the
 * route checks (docs/checks.md, "Browser, multi-step and Playwright check suites").
 */
export const CreateMultiStepCheckBody = CreateBrowserCheckBody;

/**
 * Body of `POST /v1/checks/playwright`, a Playwright check suite: the shared fields, `name` and
 * `dependencies` (the project: at most 100 files) required, the test entry as `script` (an inline
 * spec, at most 131 072 characters) or `scriptPath` (a path among `dependencies`), exactly one
 * (checked with the project's other rules by playwrightProjectRules), `timeoutSeconds` 1–1800
 * (default 1800), `frequency` and `sslCheckDomain` as browser checks.
 */
export const CreatePlaywrightCheckBody = Type.Object(
  {
    ...scriptCheckFields,
    script: Type.Optional(Nullable(Type.String({ maxLength: 131_072, default: null }))),
    dependencies: DependenciesSchema,
    timeoutSeconds: timeoutSeconds(SUITE_TIMEOUT_SECONDS),
  },
  strict,
);

/** Most UTF-8 bytes of one dependency file of a Playwright check suite: 128 KiB. */
export const MAX_SUITE_FILE_BYTES = 128 * 1024;

/** Most UTF-8 bytes of all dependency files of a Playwright check suite together: 5 MiB. */
export const MAX_SUITE_PROJECT_BYTES = 5 * 1024 * 1024;

/** Request body limit of the routes that take a Playwright check suite's project, bytes: 6 MiB. */
export const SUITE_BODY_LIMIT_BYTES = 6 * 1024 * 1024;

const PLAYWRIGHT_CONFIG = /^playwright\.config\.(?:ts|js|mjs|cjs)$/;
const LOCK_FILES = new Set(['package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml']);

/**
 * Rules of a Playwright check suite's project that JSON Schema cannot express, on a stored or
 * merged check (docs/checks.md, "Browser, multi-step and Playwright check suites"):
 * - `dependencies`: at most 100 files of DependencySchema (relative paths inside the project,
 *   unique), each at most 128 KiB and all at most 5 MiB of UTF-8; at the project's root a
 *   `package.json` holding a JSON object, a `playwright.config.{ts,js,mjs,cjs}` and at most one
 *   lock file (`package-lock.json`, `npm-shrinkwrap.json`, `yarn.lock`, `pnpm-lock.yaml`);
 * - the test entry: exactly one of `script` (non-empty) and `scriptPath` (one of the paths of
 *   `dependencies`).
 * @throws HttpError 400 naming the field (`dependencies`, `dependencies[i].…`, `script`, `scriptPath`).
 */
export function playwrightProjectRules(doc: Record<string, unknown>): void {
  if (doc.dependencies == null)
    throw badField('dependencies', 'must hold the Playwright project', 'required');
  const files = validateBodyPart(DependenciesSchema, doc.dependencies, 'dependencies');
  const paths = new Set<string>();
  let total = 0;
  files.forEach(({ path, content }, i) => {
    if (paths.has(path)) throw badField(`dependencies[${i}].path`, `${path} is given twice`, 'uniqueItems');
    paths.add(path);
    const bytes = Buffer.byteLength(content, 'utf8');
    if (bytes > MAX_SUITE_FILE_BYTES) {
      throw badField(
        `dependencies[${i}].content`,
        `must be at most ${MAX_SUITE_FILE_BYTES} bytes`,
        'maxLength',
      );
    }
    total += bytes;
  });
  if (total > MAX_SUITE_PROJECT_BYTES) {
    throw badField('dependencies', `must hold at most ${MAX_SUITE_PROJECT_BYTES} bytes in all`, 'maxLength');
  }
  const manifest = files.find((f) => f.path === 'package.json');
  if (!manifest) throw badField('dependencies', 'must hold a package.json at the project root', 'project');
  let parsed: unknown;
  try {
    parsed = JSON.parse(manifest.content);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw badField(
      `dependencies[${files.indexOf(manifest)}].content`,
      'package.json must be a JSON object',
      'project',
    );
  }
  if (!files.some((f) => PLAYWRIGHT_CONFIG.test(f.path))) {
    throw badField(
      'dependencies',
      'must hold a playwright.config.{ts,js,mjs,cjs} at the project root',
      'project',
    );
  }
  if (files.filter((f) => LOCK_FILES.has(f.path)).length > 1) {
    throw badField('dependencies', 'must hold at most one lock file', 'project');
  }
  const script = doc.script as string | null | undefined;
  const scriptPath = doc.scriptPath as string | null | undefined;
  const hasScript = script != null && script !== '';
  if (hasScript === (scriptPath != null)) {
    throw badField(hasScript ? 'scriptPath' : 'script', 'give exactly one of script and scriptPath', 'oneOf');
  }
  if (scriptPath != null && !paths.has(scriptPath)) {
    throw badField('scriptPath', 'must be the path of one of the dependencies', 'exists');
  }
}
