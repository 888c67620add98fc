import { Type } from '@sinclair/typebox';
import { NullableTimestamp, StringEnum, strict, Timestamp } from '../platform/http/schema-helpers.js';
import { ROLES } from '../platform/http/permissions.js';

/** An email as people type it: at most 254 characters (RFC 5321), one `@`. */
export const Email = Type.String({ minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$' });
/** A person's name. */
export const PersonName = Type.String({ minLength: 1, maxLength: 200 });
/** A password as sent: its length rule (12–128) is checked by passwords.ts, naming the field. */
export const PasswordField = Type.String({ maxLength: 1024 });
/** A token of a link (invitation, reset) or a challenge: 32 bytes, base64url. */
export const TokenField = Type.String({ minLength: 1, maxLength: 256 });

export const RoleSchema = StringEnum(ROLES);

/** A person of the account (docs/teams.md, "People"). */
export const UserSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: RoleSchema,
  status: StringEnum(['ACTIVE', 'INVITED'] as const),
  twoFactorEnabled: Type.Boolean(),
  sso: Type.Boolean(),
  createdAt: Timestamp,
  lastSignInAt: NullableTimestamp,
});

/** The answer to an invitation: the person, and the link when no SMTP server is configured. */
export const InvitedUserSchema = Type.Object({
  ...UserSchema.properties,
  invitationUrl: Type.Optional(Type.String()),
});

export const InviteBody = Type.Object(
  { email: Email, role: RoleSchema, name: Type.Optional(PersonName) },
  strict,
);
export const UpdateUserBody = Type.Object(
  { role: Type.Optional(RoleSchema), name: Type.Optional(PersonName) },
  strict,
);
export const UserIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, strict);
export const ChangePasswordBody = Type.Object(
  { currentPassword: PasswordField, newPassword: PasswordField },
  strict,
);
export const SessionSchema = Type.Object({
  id: Type.String(),
  current: Type.Boolean(),
  userAgent: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  lastSeenAt: Timestamp,
  expiresAt: Timestamp,
});
export const TwoFactorSetupSchema = Type.Object({ secret: Type.String(), otpauthUrl: Type.String() });
export const CodeBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 64 }) }, strict);
export const RecoveryCodesSchema = Type.Object({ recoveryCodes: Type.Array(Type.String()) });
export const DisableTwoFactorBody = Type.Object(
  { password: PasswordField, code: Type.String({ minLength: 1, maxLength: 64 }) },
  strict,
);
