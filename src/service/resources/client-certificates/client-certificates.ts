import { createPrivateKey, type KeyObject, randomUUID, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import type { Kysely } from 'kysely';
import { badField, notFound } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/pagination.js';
import type { ClientCertificate, CreateClientCertificate } from './schema.js';
import { openSecrets, type SecretLayout, sealSecrets } from '../../platform/store/secret-fields.js';
import type { Database } from '../../platform/store/database.js';
import { secretBoxOf } from '../../platform/store/secret-box.js';
import { readDoc, writeDoc } from '../../platform/store/schema.js';
import { type CertificateRow, CertificateQueries } from './store.js';

/** Fields of a certificate's `doc` sealed at rest: the private key and its passphrase. */
export const CERTIFICATE_SECRETS: SecretLayout = { strings: ['key', 'passphrase'] };

/** What the `doc` column of a client certificate holds (JSON). */
export type CertificateDoc = { cert: string; key: string; passphrase: string | null; ca: string | null };

/**
 * A client certificate with its private key, for the job builder only (docs/protocol.md:
 * a job carries the client certificate for its target host). Never send it to an API client.
 */
export type ResolvedClientCertificate = {
  id: string;
  /** As stored: a host name or a `*.` wildcard, lower case. */
  host: string;
  /** PEM: the certificate, intermediates may follow. */
  cert: string;
  /** PEM private key, possibly encrypted with `passphrase`. */
  key: string;
  passphrase: string | null;
  /** PEM bundle of CA certificates, or null. */
  ca: string | null;
};

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** Parses every PEM certificate block of `pem`; @throws HttpError 400 naming `field` when there is none or one is invalid. */
function parseCertificates(pem: string, field: string): X509Certificate[] {
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0)
    throw badField(field, 'must hold a PEM certificate (-----BEGIN CERTIFICATE-----)', 'pem');
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch (err) {
      const which = blocks.length > 1 ? `certificate ${i + 1} ` : '';
      throw badField(field, `${which}is not a valid X.509 certificate: ${(err as Error).message}`, 'pem');
    }
  });
}

/** Loads the private key; @throws HttpError 400 naming `key`, or `passphrase` for an encrypted key it cannot open. */
function parsePrivateKey(key: string, passphrase: string | null | undefined): KeyObject {
  const encrypted = /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type:\s*4,\s*ENCRYPTED/.test(key);
  if (encrypted && !passphrase) throw badField('passphrase', 'is required: key is encrypted', 'required');
  try {
    return createPrivateKey(passphrase ? { key, format: 'pem', passphrase } : { key, format: 'pem' });
  } catch (err) {
    if (encrypted) throw badField('passphrase', 'does not decrypt key', 'passphrase');
    throw badField('key', `is not a PEM private key: ${(err as Error).message}`, 'pem');
  }
}

/**
 * Checks a create body beyond its schema: `cert` holds valid PEM certificates,
 * `key` is a private key (opened with `passphrase` when encrypted) that belongs to
 * the first certificate of `cert`, `ca` holds valid PEM certificates.
 * @throws HttpError 400 naming `cert`, `key`, `passphrase` or `ca`.
 */
export function validateClientCertificate(body: CreateClientCertificate): void {
  const [leaf] = parseCertificates(body.cert, 'cert');
  const key = parsePrivateKey(body.key, body.passphrase);
  if (!leaf!.checkPrivateKey(key))
    throw badField('key', 'does not belong to the certificate in cert', 'keyMatch');
  if (body.ca != null) parseCertificates(body.ca, 'ca');
}

/** The API view: id, host, cert, ca, created_at; never the key or passphrase (docs/api.md, "Client certificate"). */
export function presentClientCertificate(row: CertificateRow): ClientCertificate {
  const doc = readDoc(row.doc);
  return { id: row.id, host: row.host, cert: doc.cert, ca: doc.ca, created_at: iso(row.created_at)! };
}

/**
 * Client certificates, always scoped to one account. Several may share a host: the newest is used.
 * The private key and passphrase are stored sealed (AES-256-GCM, see secret-box.ts).
 */
export class ClientCertificates {
  readonly #db: Kysely<Database>;
  readonly #rows: CertificateQueries;
  constructor(db: Kysely<Database>) {
    this.#db = db;
    this.#rows = new CertificateQueries(db);
  }

  /** Validates (see validateClientCertificate) and stores; `host` is lower-cased. */
  async create(accountId: string, body: CreateClientCertificate, nowMs: number): Promise<CertificateRow> {
    validateClientCertificate(body);
    const doc: CertificateDoc = {
      cert: body.cert,
      key: body.key,
      passphrase: body.passphrase ?? null,
      ca: body.ca ?? null,
    };
    const id = randomUUID();
    const row: CertificateRow = {
      id,
      account_id: accountId,
      host: body.host.toLowerCase(),
      doc: writeDoc(sealSecrets(secretBoxOf(this.#db), doc, CERTIFICATE_SECRETS, 'client_certificates', id)),
      created_at: nowMs,
      updated_at: null,
    };
    await this.#rows.insert(row);
    return row;
  }

  /** One page, oldest first. */
  async list(accountId: string, page: { limit: number; offset: number }): Promise<CertificateRow[]> {
    return this.#rows.list(accountId, page);
  }

  /** @throws HttpError 404 when the certificate is not in the account. */
  async get(accountId: string, id: string): Promise<CertificateRow> {
    const row = await this.#rows.get(accountId, id);
    if (!row) throw notFound('client certificate', id);
    return row;
  }

  /** @returns true when a certificate was deleted. */
  async delete(accountId: string, id: string): Promise<boolean> {
    return this.#rows.delete(accountId, id);
  }
}

/**
 * The hosts a stored certificate may have to serve `hostname`: the name itself,
 * then the `*.` wildcard of its parent (one label only, as in RFC 6125 §6.4.3:
 * `*.example.com` covers `a.example.com`, not `a.b.example.com` nor `example.com`).
 * Case-insensitive; a trailing dot and IPv6 brackets are ignored; IP addresses
 * have no wildcard.
 */
export function hostCandidates(hostname: string): string[] {
  const host = hostname
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  if (host === '') return [];
  const dot = host.indexOf('.');
  if (isIP(host) !== 0 || dot < 0) return [host];
  return [host, `*${host.slice(dot)}`];
}

/**
 * The client certificate an account uses for `hostname` (docs/protocol.md): an exact
 * host match, else the `*.` wildcard of the parent domain (see hostCandidates),
 * else null. Among several certificates for the same host the newest wins, so a
 * certificate is rotated by uploading the new one, then deleting the old.
 */
export async function clientCertificateForHost(
  db: Kysely<Database>,
  accountId: string,
  hostname: string,
): Promise<ResolvedClientCertificate | null> {
  const candidates = hostCandidates(hostname);
  if (candidates.length === 0) return null;
  const rows = await new CertificateQueries(db).forHosts(accountId, candidates);
  for (const host of candidates) {
    const row = rows.find((r) => r.host === host);
    if (row) {
      const doc = openSecrets(
        secretBoxOf(db),
        readDoc(row.doc),
        CERTIFICATE_SECRETS,
        'client_certificates',
        row.id,
      );
      return { id: row.id, host: row.host, ...doc };
    }
  }
  return null;
}

declare module '../../platform/store/schema.js' {
  /** The documents of this module's tables (see StoredDocuments). */
  interface StoredDocuments {
    client_certificates: CertificateDoc;
  }
}
