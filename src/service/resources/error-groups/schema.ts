import { type Static, Type } from '@sinclair/typebox';
import { Nullable, strict, Timestamp } from '../../platform/http/schema-helpers.js';

/**
 * Body of `PATCH /v1/error-groups/{id}` (docs/api.md, "Error groups"): `archiveForEver`
 * and `archivedUntilNextEvent`, each optional, at least one required (checked by
 * the route so the 400 names a field). `true` archives, `false` unarchives.
 */
export const PatchErrorGroupBody = Type.Object(
  {
    archiveForEver: Type.Optional(Type.Boolean()),
    archivedUntilNextEvent: Type.Optional(Type.Boolean()),
  },
  strict,
);
export type PatchErrorGroup = Static<typeof PatchErrorGroupBody>;

/**
 * An error group as the API shows it (docs/api.md, "Error group"). `firstSeen` and
 * `lastSeen` are date-times of the failing runs (their `startedAt`).
 * `archivedForEver` is ours (the spec's response shows only
 * `archivedUntilNextEvent`), so a group archived by `archiveForEver` is visible
 * as such. `rootCauseAnalyses` is always empty: we do no root-cause analysis.
 */
export const ErrorGroupSchema = Type.Object(
  {
    id: Type.String(),
    checkId: Type.String(),
    errorHash: Type.String(),
    rawErrorMessage: Nullable(Type.String()),
    cleanedErrorMessage: Type.String(),
    firstSeen: Timestamp,
    lastSeen: Timestamp,
    archivedUntilNextEvent: Type.Boolean(),
    archivedForEver: Type.Boolean(),
    rootCauseAnalyses: Type.Array(Type.Object({}, { additionalProperties: true })),
  },
  strict,
);
export type ErrorGroup = Static<typeof ErrorGroupSchema>;
