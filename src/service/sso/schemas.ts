/**
 * The published schemas of single sign-on (docs/teams.md, "Single sign-on"): TypeBox only, so the web app
 * takes its types from them (app/src/api/schemas.ts).
 */
import { Type } from '@sinclair/typebox';
import { ROLES } from '../platform/http/roles.js';

/** A role (platform/http/roles.ts). */
export const RoleSchema = Type.Union(
  ROLES.map((r) => Type.Literal(r)),
  { description: 'READ_ONLY, READ_WRITE, ADMIN or OWNER' },
);

/** What `GET /v1/sso` answers (docs/teams.md, "Single sign-on"): the client secret never, only whether one is stored. */
export const SsoSettingsSchema = Type.Object({
  enabled: Type.Boolean({ description: 'Whether the account signs in through an OpenID provider' }),
  issuer: Type.Union([Type.String(), Type.Null()]),
  clientId: Type.Union([Type.String(), Type.Null()]),
  clientSecretConfigured: Type.Boolean({ description: 'A client secret is stored; it is never answered' }),
  defaultRole: RoleSchema,
  groupsClaim: Type.Union([Type.String(), Type.Null()]),
  groupRoles: Type.Record(Type.String(), RoleSchema),
  allowedDomains: Type.Array(Type.String()),
  ssoOnly: Type.Boolean(),
  redirectUri: Type.String({ description: 'The redirect URI to register at the provider' }),
  updatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

/** The body of `PUT /v1/sso`; `clientSecret` left out keeps the stored one. */
export const PutSsoBody = Type.Object(
  {
    issuer: Type.String({ minLength: 1, maxLength: 2048, description: 'The provider’s issuer URL (https)' }),
    clientId: Type.String({ minLength: 1, maxLength: 512 }),
    clientSecret: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2048, description: 'Omitted: the stored secret is kept' }),
    ),
    defaultRole: RoleSchema,
    groupsClaim: Type.Optional(
      Type.Union([
        Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_:./-]+$' }),
        Type.Null(),
      ]),
    ),
    groupRoles: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 256 }), RoleSchema, { maxProperties: 100 }),
    ),
    allowedDomains: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { maxItems: 50 }),
    ),
    ssoOnly: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
