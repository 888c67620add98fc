import { type Static, Type } from '@sinclair/typebox';
import { StringEnum, strict } from '../platform/http/schema-helpers.js';

/** Outpost's plan name in every account answer: one self-hosted plan, every feature on, no limits. */
export const OUTPOST_PLAN = 'outpost';

/**
 * An account as the hosted API shapes it (its `Account` schema; docs/api.md, "Accounts"): Outpost's account
 * `id` and `name`, the default `runtimeId` of new checks, and the one self-hosted `plan`. `settings` is empty
 * and `features` lists no flag: Outpost gates nothing behind one.
 */
export const AccountSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    runtimeId: Type.String(),
    plan: Type.String(),
    planDisplayName: Type.String(),
    settings: Type.Object({}),
    features: Type.Array(Type.String()),
  },
  strict,
);
export type Account = Static<typeof AccountSchema>;

/** Path of `GET /v1/accounts/{accountId}` and `GET /next/accounts/{accountId}`. */
export const AccountParams = Type.Object({ accountId: Type.String({ minLength: 1, maxLength: 64 }) }, strict);

/**
 * `GET /v1/accounts/me/entitlements` (the hosted API's `Entitlements`): the plan, the run locations (none
 * is limited: `all` is empty and `maxPerCheck` absent) and no entitlement, since Outpost limits no feature
 * and no quantity.
 */
export const EntitlementsSchema = Type.Object(
  {
    plan: Type.String(),
    planDisplayName: Type.String(),
    locations: Type.Object({ all: Type.Array(Type.Object({}, { additionalProperties: true })) }, strict),
    entitlements: Type.Array(
      Type.Object(
        {
          key: Type.String(),
          name: Type.String(),
          description: Type.String(),
          type: StringEnum(['flag', 'metered']),
          enabled: Type.Boolean(),
        },
        strict,
      ),
    ),
  },
  strict,
);

/**
 * `GET /next/users/me`: the caller. Outpost has no users, so the user is the API key the request
 * authenticated with: `id` its key row, `name` its label (or `API key <prefix>…` without one), no email.
 */
export const UserSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    email: Type.Union([Type.String(), Type.Null()]),
  },
  strict,
);
export type User = Static<typeof UserSchema>;
