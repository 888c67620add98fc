// Imports nothing: the web app reads the roles through the modules' published schemas (test/layering.test.ts).

/**
 * The roles of an account's people and API keys, weakest first, named as the hosted product names them
 * (docs/teams.md, "Roles"): READ_ONLY reads everything, READ_WRITE also changes checks, groups, channels,
 * pages and the rest of the monitoring, ADMIN also manages the account's API keys, people, private locations
 * and settings, OWNER also owns the account (its owners, its single sign-on).
 */
export const ROLES = ['READ_ONLY', 'READ_WRITE', 'ADMIN', 'OWNER'] as const;
export type Role = (typeof ROLES)[number];
