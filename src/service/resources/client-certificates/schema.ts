import { type Static, Type } from '@sinclair/typebox';
import { echoedResourceFields, Nullable, strict, Timestamp } from '../../platform/http/schema-helpers.js';

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';

/**
 * A host name without scheme, port or path, optionally with one leading `*.`
 * wildcard label. A wildcard needs at least two labels after it (`*.example.com`,
 * not `*.com`), as browsers demand of wildcard certificates.
 */
const CLIENT_CERTIFICATE_HOST_PATTERN = `^(?:\\*\\.(?:${LABEL}\\.)+|(?:${LABEL}\\.)*)${LABEL}$`;

/**
 * Body of `POST /v1/client-certificates` (docs/api.md, "Client certificate"): `host`,
 * `cert` (PEM, the client certificate first, intermediates may follow) and `key`
 * (PEM private key of the certificate; the spec lists only `cert` and `ca`, but
 * mutual TLS cannot work without it) required; `passphrase` when `key` is
 * encrypted; `ca` (PEM bundle) optional. Sizes in characters.
 */
export const CreateClientCertificateBody = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 253, pattern: CLIENT_CERTIFICATE_HOST_PATTERN }),
    cert: Type.String({ minLength: 1, maxLength: 65_536 }),
    key: Type.String({ minLength: 1, maxLength: 65_536 }),
    passphrase: Type.Optional(Nullable(Type.String({ maxLength: 1024 }))),
    ca: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 262_144 }))),
    ...echoedResourceFields,
  },
  strict,
);
export type CreateClientCertificate = Static<typeof CreateClientCertificateBody>;

/**
 * A client certificate as the API shows it: never the private key nor its
 * passphrase. `host` is stored lower-cased; `created_at` is a date-time.
 */
export const ClientCertificateSchema = Type.Object(
  {
    id: Type.String(),
    host: Type.String(),
    cert: Type.String(),
    ca: Nullable(Type.String()),
    created_at: Timestamp,
  },
  strict,
);
export type ClientCertificate = Static<typeof ClientCertificateSchema>;
