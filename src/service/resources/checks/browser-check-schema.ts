import { Type } from '@sinclair/typebox';
import { sharedCheckFields } from './schema.js';
import { IntegerEnum, Nullable } from '../../http/schema-helpers.js';

const strict = { additionalProperties: false } as const;

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

/**
 * Body of `POST /v1/checks/browser` (docs/api.md, "Checks" and "Browser-specific fields"):
 * the shared check fields, `name` and `script` required (`script` is string or
 * null as docs/api.md says; at most 131 072 characters), `frequency` from
 * BROWSER_FREQUENCIES (default 10), `sslCheckDomain` an FQDN or null,
 * `dependencies` at most 100 files or null (default null). No `request`,
 * response-time or packet-loss fields: browser checks have no degraded state.
 */
export const CreateBrowserCheckBody = Type.Object(
  {
    ...sharedCheckFields,
    frequency: Type.Optional(IntegerEnum(BROWSER_FREQUENCIES, { default: 10 })),
    script: Nullable(Type.String({ maxLength: 131_072 })),
    sslCheckDomain: Type.Optional(
      Nullable(Type.String({ maxLength: 253, pattern: FQDN_PATTERN, default: null })),
    ),
    dependencies: Type.Optional(Nullable(Type.Array(DependencySchema, { maxItems: 100, default: null }))),
  },
  strict,
);
