/** Client certificates for mutual TLS (`/v1/client-certificates`): never their private key or passphrase. */
import { api, getAllPages, path } from './client.js';
import type { ClientCertificate } from './schemas.js';

/**
 * What a certificate is uploaded with (docs/api.md, "Client certificate"): `host`, `cert` and `key` (PEM),
 * `passphrase` of an encrypted key and `ca` (PEM bundle), both optional.
 */
export type ClientCertificateUpload = {
  host: string;
  cert: string;
  key: string;
  passphrase?: string;
  ca?: string;
};

/** Every client certificate of the account (all pages of `GET /v1/client-certificates`). */
export const listClientCertificates = (signal?: AbortSignal) =>
  getAllPages<ClientCertificate>('/v1/client-certificates', {}, signal);

/** Uploads a certificate (`POST /v1/client-certificates`); answers it without its key and passphrase. */
export const createClientCertificate = (body: ClientCertificateUpload) =>
  api.post<ClientCertificate>('/v1/client-certificates', body);

/** Deletes a certificate (`DELETE /v1/client-certificates/{id}`). */
export const deleteClientCertificate = (id: string) => api.delete(path`/v1/client-certificates/${id}`);
