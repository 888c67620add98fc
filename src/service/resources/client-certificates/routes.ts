import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../platform/http/service-app.js';
import { ClientCertificates, presentClientCertificate } from './client-certificates.js';
import type { ServiceContext } from '../../context.js';
import { notFound } from '../../platform/http/errors.js';
import { offsetOf, PageQuery } from '../../platform/http/pagination.js';
import { ClientCertificateSchema, CreateClientCertificateBody } from './schema.js';
import { IdParams, NoContent } from '../../platform/http/schema-helpers.js';

const tags = ['client certificates'];

/**
 * Client certificates for mutual TLS (docs/api.md, "Client certificate"): create, list,
 * read, delete. No update: a certificate is replaced by uploading a new one for
 * the same host (the newest wins) and deleting the old. Responses never hold the
 * private key or its passphrase.
 */
export async function clientCertificateRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const certificates = new ClientCertificates(ctx.db);

  app.post(
    '/v1/client-certificates',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Create a client certificate',
        body: CreateClientCertificateBody,
        response: { 201: ClientCertificateSchema },
      },
    },
    async (request, reply) => {
      const row = await certificates.create(request.accountId, request.body, Date.now());
      ctx.log.info(
        { accountId: request.accountId, clientCertificateId: row.id, host: row.host },
        'client certificate created',
      );
      return reply.code(201).send(presentClientCertificate(row));
    },
  );

  app.get(
    '/v1/client-certificates',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'List client certificates',
        querystring: PageQuery(10),
        response: { 200: Type.Array(ClientCertificateSchema) },
      },
    },
    async (request) => {
      const query = request.query;
      const rows = await certificates.list(request.accountId, {
        limit: query.limit,
        offset: offsetOf(query),
      });
      return rows.map(presentClientCertificate);
    },
  );

  app.get(
    '/v1/client-certificates/:id',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Get a client certificate',
        params: IdParams,
        response: { 200: ClientCertificateSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      return presentClientCertificate(await certificates.get(request.accountId, id));
    },
  );

  app.delete(
    '/v1/client-certificates/:id',
    {
      config: { permission: 'write' },
      schema: {
        tags,
        summary: 'Delete a client certificate',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!(await certificates.delete(request.accountId, id))) throw notFound('client certificate', id);
      return reply.code(204).send();
    },
  );
}
