import { isCredentialHeader } from '../../common/credential-headers.js';
import { REDACTED } from '../../common/redaction.js';
import { channelSecrets } from '../alerting/index.js';
import {
  CHECK_SECRETS,
  GROUP_SECRETS,
  maskSecrets,
  type SecretLayout,
} from '../platform/store/secret-fields.js';
import { CERTIFICATE_SECRETS } from '../resources/index.js';

/** Largest document an entry keeps (`before`, `after`), bytes of JSON: larger ones are kept as a marker. */
export const AUDIT_DOCUMENT_MAX_BYTES = 64 * 1024;
/**
 * Largest answer the audit log parses, bytes: a larger one is not read at all, so parsing and masking it holds
 * the event loop well under 50 ms (one larger would rarely fit in AUDIT_DOCUMENT_MAX_BYTES once masked anyway).
 */
export const AUDIT_PARSE_MAX_BYTES = 256 * 1024;
/** Deepest nesting masked; anything deeper is replaced by the mask. */
const MAX_DEPTH = 32;

/** What an entry keeps of a document too large to keep (over {@link AUDIT_DOCUMENT_MAX_BYTES}). */
export type TruncatedDocument = { truncated: true; bytes: number };

/**
 * Words of a field name that say the field may carry a secret: an API key or a private location's key in
 * clear (`rawKey`, `key`), a token, a password, one-time codes (`recoveryCodes`), a TOTP seed (`secret`,
 * `otpauthUrl`), an invitation link (`invitationUrl`). The list errs on the side of dropping: a harmless
 * field so named (`keyPrefix`) is masked too.
 */
const SECRET_WORDS: ReadonlySet<string> = new Set([
  'key',
  'keys',
  'apikey',
  'secret',
  'secrets',
  'token',
  'tokens',
  'password',
  'passwords',
  'passwd',
  'pwd',
  'passphrase',
  'code',
  'codes',
  'otp',
  'otpauth',
  'totp',
  'credential',
  'credentials',
  'signature',
  'sig',
  'jwt',
  'cookie',
  'cookies',
  'authorization',
  'bearer',
  'invitation',
  'recovery',
  'seed',
  'hash',
  'salt',
  'csrf',
]);

/** Last words of a field name that name something other than the secret itself (`apiKeyId`, `tokenExpiresAt`). */
const HARMLESS_LAST_WORDS: ReadonlySet<string> = new Set(['id', 'ids', 'at', 'count', 'type']);

/** The words of a field name: camelCase, snake_case, kebab-case and dotted names split, lower-cased. */
function wordsOf(name: string): string[] {
  return name
    .split(/(?<=[a-z0-9])(?=[A-Z])|[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word.toLowerCase());
}

/**
 * Whether a field named `name` may carry a secret ({@link SECRET_WORDS}, or a credential header's name as
 * `isCredentialHeader` knows them), unless its last word says it names something else ({@link HARMLESS_LAST_WORDS}).
 */
export function isSecretFieldName(name: string): boolean {
  const words = wordsOf(name);
  if (words.length > 1 && HARMLESS_LAST_WORDS.has(words.at(-1)!)) return false;
  return isCredentialHeader(name) || words.some((word) => SECRET_WORDS.has(word));
}

/** A URL's userinfo password, `scheme://user:password@`. */
const URL_PASSWORD = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#@:]*:)[^/?#@]*@/;
/** Values that are secrets whatever field holds them: Outpost's keys, private keys, TOTP links. */
const SECRET_VALUE = /\b(?:op|pl)_[0-9a-f]{16,}|-----BEGIN[A-Z ]*PRIVATE KEY-----|^otpauth:/i;

/**
 * A string value as the audit log keeps it: `*****` when it looks like a secret by itself
 * ({@link SECRET_VALUE}); a URL with its userinfo password and the values of its credential-named query
 * parameters (`?token=…`, `?api_key=…`) masked; anything else as it is.
 */
function maskString(value: string): string {
  if (SECRET_VALUE.test(value)) return REDACTED;
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(value)) return value;
  let masked = value.replace(URL_PASSWORD, `$1${REDACTED}@`);
  const query = masked.indexOf('?');
  if (query !== -1) {
    const [base, rest] = [masked.slice(0, query + 1), masked.slice(query + 1)];
    masked =
      base +
      rest.replace(/([^&#=]+)=([^&#]*)/g, (pair, name: string) =>
        isSecretFieldName(safeDecode(name)) ? `${name}=${REDACTED}` : pair,
      );
  }
  return masked;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Whether `value` is a name/value item (a header, a query parameter, a variable): its `key` is a name. */
function isNamedItem(value: Record<string, unknown>): value is Record<string, unknown> & { key: string } {
  return typeof value.key === 'string' && 'value' in value;
}

/**
 * A deep copy of `value` with every secret masked (`*****`): fields whose name says they may carry a secret
 * ({@link isSecretFieldName}; booleans, numbers and nulls kept, as `secret: true` says nothing secret), the
 * `value` of a name/value item that is `secret` or whose name is a credential header's, and strings that are
 * secrets by themselves or URLs with credentials ({@link maskString}).
 */
function maskDeep(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return maskString(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => maskDeep(item, depth + 1));
  const object = value as Record<string, unknown>;
  const named = isNamedItem(object);
  const out: Record<string, unknown> = {};
  for (const [field, item] of Object.entries(object)) {
    if (named && field === 'key') {
      out[field] = maskString(item as string);
    } else if (named && field === 'value') {
      const secretItem = object.secret === true || isCredentialHeader(object.key as string);
      out[field] = secretItem && item !== '' && item !== null ? REDACTED : maskDeep(item, depth + 1);
    } else if (isSecretFieldName(field) && item !== null && typeof item === 'object') {
      out[field] = REDACTED;
    } else if (isSecretFieldName(field) && typeof item === 'string') {
      out[field] = item === '' ? item : REDACTED;
    } else {
      out[field] = maskDeep(item, depth + 1);
    }
  }
  return out;
}

/** The secret layout of a resource's documents, by resource type (the same lists the store seals by). */
function layoutOf(resourceType: string, doc: Record<string, unknown>): SecretLayout | null {
  switch (resourceType) {
    case 'check':
      return CHECK_SECRETS;
    case 'check-group':
      return GROUP_SECRETS;
    case 'client-certificate':
      return CERTIFICATE_SECRETS;
    case 'alert-channel':
      return typeof doc.type === 'string' ? channelSecrets(doc.type) : null;
    default:
      return null;
  }
}

/**
 * The document an audit entry keeps of `doc` (an answer of the API, parsed), as JSON text: first masked as
 * the API masks the resource's stored secrets (its secret layout, whatever OUTPOST_API_CREDENTIALS says; docs/
 * security.md, "Credentials in answers"), then every field that may carry a secret masked or dropped by name
 * and value (one-time secrets such as a new key's `rawKey`; see {@link maskDeep}). A result over
 * {@link AUDIT_DOCUMENT_MAX_BYTES} is kept as `{"truncated":true,"bytes":…}`. Null stays null.
 */
export function auditDocument(resourceType: string, doc: unknown): string | null {
  if (doc === null || doc === undefined) return null;
  let masked: unknown = doc;
  if (typeof doc === 'object' && !Array.isArray(doc)) {
    const layout = layoutOf(resourceType, doc as Record<string, unknown>);
    if (layout) masked = maskSecrets(doc as Record<string, unknown>, layout, 'masked');
  }
  const text = JSON.stringify(maskDeep(masked, 0));
  const bytes = Buffer.byteLength(text);
  return bytes > AUDIT_DOCUMENT_MAX_BYTES ? truncatedDocument(bytes) : text;
}

/** The marker kept in place of a document of `bytes` too large to keep or to parse. */
export function truncatedDocument(bytes: number): string {
  const marker: TruncatedDocument = { truncated: true, bytes };
  return JSON.stringify(marker);
}
