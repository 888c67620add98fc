import { isCredentialHeader } from '../../../common/credential-headers.js';
import { copyJson } from '../../../common/json-copy.js';
import { REDACTED } from '../../../common/redaction.js';
import { badField } from '../http/errors.js';
import { SecretBox } from './secret-box.js';

/**
 * A value that is only a reference to a variable (`{{TOKEN}}`, spaces inside the braces allowed) reveals
 * nothing: the variable itself is masked when secret. Such header values and passwords stay visible, so a
 * user can see which variable a check uses.
 */
const VARIABLE_REFERENCE = /^\{\{\s*[A-Za-z_][A-Za-z0-9_]*\s*\}\}$/;

/** A header or query parameter item. */
type KeyValue = { key: string; value: string } & Record<string, unknown>;
/** An environment variable item. */
type EnvVar = { key: string; value: string; secret?: boolean } & Record<string, unknown>;
/** The parts of an HTTP request (a check's `request`, a group's `apiCheckDefaults`) that may hold secrets. */
type RequestLike = Record<string, unknown> & {
  url?: unknown;
  headers?: unknown;
  queryParameters?: unknown;
  basicAuth?: { username: string; password: string } | null;
};

/**
 * How an answer shows stored credentials (docs/security.md, "Credentials in answers"): `masked` (`*****`, the
 * default) or `clear` (as the hosted API answers them, for clients that compare what they read with what they
 * sent, such as the Terraform provider). `secret` variables are masked in both.
 */
export type CredentialView = 'masked' | 'clear';

/** Which fields of a stored document hold secrets; paths are dot-separated from the document's root. */
export type SecretLayout = {
  /**
   * Request-like objects: credential-named header and query parameter values, `basicAuth.password`,
   * and the password in `url` (`https://user:password@host`).
   */
  requests?: readonly string[];
  /** Environment variable arrays: the values of `secret` items. */
  variables?: readonly string[];
  /** Header arrays (alert channel webhooks): credential header values. */
  headers?: readonly string[];
  /** Plain string fields (alert channel integration secrets). */
  strings?: readonly string[];
};

/** Where a secret value sits and what kind it is, for `mapSecrets` callbacks. */
export type SecretPlace = {
  path: string;
  /** `pair`: a credential-named header or query parameter; `url`: a URL with a userinfo password. */
  kind: 'pair' | 'password' | 'url' | 'variable' | 'string';
};

/** `scheme://user:password@` at the start of a URL: the password is group 2. */
const URL_PASSWORD = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#@:]*:)([^/?#@]*)@/;

/** True when `url` carries a userinfo password that is more than a bare `{{VARIABLE}}` reference. */
function hasUrlPassword(url: string): boolean {
  const m = URL_PASSWORD.exec(url);
  return m !== null && m[2] !== '' && !VARIABLE_REFERENCE.test(m[2]!) && m[2] !== REDACTED;
}

/** `url` with its userinfo password replaced by the mask. */
function maskUrlPassword(url: string): string {
  return hasUrlPassword(url) ? url.replace(URL_PASSWORD, `$1${REDACTED}@`) : url;
}

function getPath(doc: Record<string, unknown>, path: string): unknown {
  let cur: unknown = doc;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function setPath(doc: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let cur = doc;
  for (const part of parts.slice(0, -1)) cur = cur[part] as Record<string, unknown>;
  cur[parts.at(-1)!] = value;
}

function mapHeaders(
  headers: unknown,
  path: string,
  fn: (value: string, place: SecretPlace) => string,
): unknown {
  if (!Array.isArray(headers)) return headers;
  return headers.map((h: KeyValue, i) =>
    h && typeof h.value === 'string' && typeof h.key === 'string' && isCredentialHeader(h.key)
      ? { ...h, value: fn(h.value, { path: `${path}[${i}].value`, kind: 'pair' }) }
      : h,
  );
}

/**
 * A deep copy of `doc` with every secret value of `layout` replaced by `fn(value, place)`. Missing or
 * null fields are left alone.
 */
export function mapSecrets<T extends Record<string, unknown>>(
  doc: T,
  layout: SecretLayout,
  fn: (value: string, place: SecretPlace) => string,
): T {
  const copy = copyJson(doc) as Record<string, unknown>;
  for (const path of layout.requests ?? []) {
    const request = getPath(copy, path) as RequestLike | null | undefined;
    if (!request || typeof request !== 'object') continue;
    for (const list of ['headers', 'queryParameters'] as const) {
      if (request[list] !== undefined) request[list] = mapHeaders(request[list], `${path}.${list}`, fn);
    }
    if (typeof request.url === 'string' && (hasUrlPassword(request.url) || SecretBox.isSealed(request.url))) {
      request.url = fn(request.url, { path: `${path}.url`, kind: 'url' });
    }
    const auth = request.basicAuth;
    if (auth && typeof auth.password === 'string') {
      request.basicAuth = {
        ...auth,
        password: fn(auth.password, { path: `${path}.basicAuth.password`, kind: 'password' }),
      };
    }
  }
  for (const path of layout.headers ?? []) {
    const headers = getPath(copy, path);
    if (headers !== undefined) setPath(copy, path, mapHeaders(headers, path, fn));
  }
  for (const path of layout.variables ?? []) {
    const vars = getPath(copy, path);
    if (!Array.isArray(vars)) continue;
    setPath(
      copy,
      path,
      vars.map((v: EnvVar, i) =>
        v?.secret && typeof v.value === 'string'
          ? { ...v, value: fn(v.value, { path: `${path}[${i}].value`, kind: 'variable' }) }
          : v,
      ),
    );
  }
  for (const path of layout.strings ?? []) {
    const value = getPath(copy, path);
    if (typeof value === 'string') setPath(copy, path, fn(value, { path, kind: 'string' }));
  }
  return copy as T;
}

/**
 * The API view of a document: secret values become `*****` (in the `clear` view, only `secret` variables and
 * values still sealed). A credential header value or password that is empty or only a `{{VARIABLE}}` reference
 * stays visible (it holds no secret; the variable is masked itself).
 */
export function maskSecrets<T extends Record<string, unknown>>(
  doc: T,
  layout: SecretLayout,
  view: CredentialView = 'masked',
): T {
  return mapSecrets(doc, layout, (value, place) => {
    // A secret variable is never readable again, whatever the view; a sealed value is never answered.
    if (view === 'clear' && place.kind !== 'variable' && !SecretBox.isSealed(value)) return value;
    if (place.kind === 'url') return SecretBox.isSealed(value) ? REDACTED : maskUrlPassword(value);
    return holdsNoSecret(value, place) ? value : REDACTED;
  });
}

/**
 * A header value or password that holds no secret, kept visible and unsealed: empty (a check without basic
 * auth is sent `{username: "", password: ""}` by the hosted API's clients, and answering `*****` would say a
 * password is set), or only a `{{VARIABLE}}` reference.
 */
function holdsNoSecret(value: string, place: SecretPlace): boolean {
  return (
    (place.kind === 'pair' || place.kind === 'password') &&
    (value === '' || VARIABLE_REFERENCE.test(value.trim()))
  );
}

/**
 * Seals every secret value of a plaintext document (never one read from the store unopened) for storage (a bare `{{VARIABLE}}` reference stays as
 * it is: it holds no secret); the place's AAD is
 * `<table>:<rowId>:<path>`, so a sealed value does not open in another row or field.
 */
export function sealSecrets<T extends Record<string, unknown>>(
  box: SecretBox,
  doc: T,
  layout: SecretLayout,
  table: string,
  rowId: string | number,
): T {
  return mapSecrets(doc, layout, (value, place) =>
    holdsNoSecret(value, place) ? value : box.seal(value, `${table}:${rowId}:${place.path}`),
  );
}

/**
 * Opens every sealed secret value of a stored document (values stored before sealing was introduced pass
 * through unchanged until the start-up sweep seals them).
 * @throws OutpostError OUTPOST_ERR_ENCRYPTION_KEY when a sealed value does not open (wrong key, damaged
 *   data, or a value moved from another row or field).
 */
export function openSecrets<T extends Record<string, unknown>>(
  box: SecretBox,
  doc: T,
  layout: SecretLayout,
  table: string,
  rowId: string | number,
): T {
  return mapSecrets(doc, layout, (value, place) =>
    SecretBox.isSealed(value) ? box.open(value, `${table}:${rowId}:${place.path}`) : value,
  );
}

function maskRefused(field: string, what: string): never {
  throw badField(field, `is the mask ${REDACTED} but no ${what} is stored; send the value`, 'mask');
}

/**
 * Resolves masks in an incoming document against the stored plaintext one (the rule for every resource
 * with masked fields): a secret value sent as `*****` keeps the stored value of the same place, a new
 * value replaces it, a removed field or item removes it. Headers match by name (case-insensitive, the
 * n-th header of a name to the n-th stored one of that name), passwords by their request, variables by key,
 * strings by path. A value that is the mask where no secret is stored is refused.
 * @param fieldOf maps a path of the document to the field name errors report (`request.headers[0].value`).
 * @throws HttpError 400 naming the field when the mask has nothing stored to stand for.
 */
export function keepMaskedSecrets<T extends Record<string, unknown>>(
  incoming: T,
  stored: Record<string, unknown> | null,
  layout: SecretLayout,
  fieldOf: (path: string) => string = (p) => p,
): T {
  const copy = copyJson(incoming) as Record<string, unknown>;
  const headerLists = [
    ...(layout.requests ?? []).flatMap((p) => [`${p}.headers`, `${p}.queryParameters`]),
    ...(layout.headers ?? []),
  ];
  for (const path of headerLists) {
    const headers = getPath(copy, path);
    if (!Array.isArray(headers)) continue;
    const before = (stored ? getPath(stored, path) : undefined) as KeyValue[] | undefined;
    const seen = new Map<string, number>();
    headers.forEach((h: KeyValue, i) => {
      if (!h || typeof h.key !== 'string') return;
      const name = h.key.trim().toLowerCase();
      const nth = seen.get(name) ?? 0;
      seen.set(name, nth + 1);
      if (h.value !== REDACTED || !isCredentialHeader(h.key)) return;
      const same = (Array.isArray(before) ? before : []).filter(
        (b) => b && typeof b.key === 'string' && b.key.trim().toLowerCase() === name,
      );
      const kept = same[nth] ?? (same.length === 1 ? same[0] : undefined);
      if (!kept || typeof kept.value !== 'string' || kept.value === REDACTED) {
        maskRefused(fieldOf(`${path}[${i}].value`), `${h.key} value`);
      }
      headers[i] = { ...h, value: kept.value };
    });
  }
  for (const path of layout.requests ?? []) {
    // A URL sent back with its password masked keeps the stored URL when all else is equal.
    const url = getPath(copy, `${path}.url`);
    const storedUrl = stored ? getPath(stored, `${path}.url`) : undefined;
    if (
      typeof url === 'string' &&
      typeof storedUrl === 'string' &&
      url !== storedUrl &&
      maskUrlPassword(storedUrl) === url
    ) {
      setPath(copy, `${path}.url`, storedUrl);
    } else if (typeof url === 'string' && URL_PASSWORD.exec(url)?.[2] === REDACTED) {
      // The mask in a changed URL stands for nothing: the password must be sent again.
      maskRefused(fieldOf(`${path}.url`), 'URL with that password');
    }
  }
  for (const path of layout.requests ?? []) {
    const auth = getPath(copy, `${path}.basicAuth`) as { password?: unknown } | null | undefined;
    if (!auth || auth.password !== REDACTED) continue;
    const kept = stored ? getPath(stored, `${path}.basicAuth.password`) : undefined;
    if (typeof kept !== 'string' || kept === REDACTED)
      maskRefused(fieldOf(`${path}.basicAuth.password`), 'password');
    auth.password = kept;
  }
  for (const path of layout.variables ?? []) {
    const vars = getPath(copy, path);
    if (!Array.isArray(vars)) continue;
    const before = ((stored ? getPath(stored, path) : undefined) as EnvVar[] | undefined) ?? [];
    setPath(
      copy,
      path,
      vars.map((v: EnvVar, i) => {
        const prior = before.find((s) => s.key === v.key);
        if (prior?.secret && v.secret === false) {
          throw badField(
            fieldOf(`${path}[${i}].secret`),
            'cannot be unset: a secret variable stays secret',
            'secret',
          );
        }
        if (v.value !== REDACTED) return v;
        if (!prior?.secret) maskRefused(fieldOf(`${path}[${i}].value`), `secret ${v.key}`);
        return { ...v, value: prior.value, secret: true };
      }),
    );
  }
  for (const path of layout.strings ?? []) {
    if (getPath(copy, path) !== REDACTED) continue;
    const kept = stored ? getPath(stored, path) : undefined;
    if (typeof kept !== 'string' || kept === REDACTED) maskRefused(fieldOf(path), path.split('.').at(-1)!);
    setPath(copy, path, kept);
  }
  return copy as T;
}

/** Secret fields of a check document: the API request and the check's variables. */
export const CHECK_SECRETS: SecretLayout = { requests: ['request'], variables: ['environmentVariables'] };
/** Secret fields of a check group document: `apiCheckDefaults` and the group's variables. */
export const GROUP_SECRETS: SecretLayout = {
  requests: ['apiCheckDefaults'],
  variables: ['environmentVariables'],
};
