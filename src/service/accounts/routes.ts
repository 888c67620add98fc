import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import { notFound } from '../platform/http/errors.js';
import type { ServiceApp } from '../platform/http/service-app.js';
import { AccountQueries } from '../platform/store/accounts.js';
import { DEFAULT_RUNTIME_ID } from '../resources/index.js';
import {
  type Account,
  AccountParams,
  AccountSchema,
  EntitlementsSchema,
  OUTPOST_PLAN,
  type User,
  UserSchema,
} from './schema.js';

const tags = ['accounts'];
const PLAN_DISPLAY_NAME = 'Outpost (self-hosted)';

/**
 * Accounts and the caller (docs/api.md, "Accounts"): the routes the Checkly CLI calls first (`/next/accounts/…`
 * to check its credentials, `/next/users/me` for `checkly whoami`) and their `/v1` twins of the hosted API.
 * A key sees its own account only: any other account id is a 404, like an id of another account anywhere.
 */
export async function accountRoutes(app: ServiceApp, ctx: ServiceContext): Promise<void> {
  const accounts = new AccountQueries(ctx.db);

  /** The caller's account in the hosted shape. @throws HttpError 404 when the row is gone. */
  const own = async (request: FastifyRequest): Promise<Account> => {
    const row = await accounts.find(request.accountId);
    if (!row) throw notFound('account', request.accountId);
    return {
      id: row.id,
      name: row.name,
      runtimeId: DEFAULT_RUNTIME_ID,
      plan: OUTPOST_PLAN,
      planDisplayName: PLAN_DISPLAY_NAME,
      settings: {},
      features: [],
    };
  };
  /** The caller's account when `accountId` names it. @throws HttpError 404 for any other id. */
  const named = async (request: FastifyRequest, accountId: string): Promise<Account> => {
    if (accountId !== request.accountId) throw notFound('account', accountId);
    return own(request);
  };

  for (const prefix of ['/v1', '/next']) {
    app.get(
      `${prefix}/accounts`,
      {
        config: { permission: 'read' },
        schema: {
          tags,
          summary: 'List the accounts of the key',
          description: 'One: the account the key belongs to.',
          response: { 200: Type.Array(AccountSchema) },
        },
      },
      async (request) => [await own(request)],
    );
    app.get(
      `${prefix}/accounts/:accountId`,
      {
        config: { permission: 'read' },
        schema: {
          tags,
          summary: 'Get an account',
          description: "The key's own account; any other id is a 404.",
          params: AccountParams,
          response: { 200: AccountSchema },
        },
      },
      async (request) => named(request, request.params.accountId),
    );
  }

  app.get(
    '/v1/accounts/me',
    {
      config: { permission: 'read' },
      schema: { tags, summary: "Get the key's account", response: { 200: AccountSchema } },
    },
    async (request) => own(request),
  );

  app.get(
    '/v1/accounts/me/entitlements',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: "Get the account's entitlements",
        description: 'Outpost limits no feature, location or quantity: no entitlement is listed.',
        response: { 200: EntitlementsSchema },
      },
    },
    async () => ({
      plan: OUTPOST_PLAN,
      planDisplayName: PLAN_DISPLAY_NAME,
      locations: { all: [] },
      entitlements: [],
    }),
  );

  app.get(
    '/next/users/me',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Get the caller',
        description: 'Outpost has no users: the caller is the API key, named by its label or its prefix.',
        response: { 200: UserSchema },
      },
    },
    async (request): Promise<User> => {
      const key = request.apiKeyId ? await accounts.keyById(request.accountId, request.apiKeyId) : undefined;
      const name = key?.label ? key.label : `API key ${key?.key_prefix ?? ''}…`;
      return { id: request.apiKeyId ?? request.accountId, name, email: null };
    },
  );
}
