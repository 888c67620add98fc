import { Type } from '@sinclair/typebox';
import { CheckIdParams, NullableTimestamp, strict, Timestamp } from '../platform/http/schema-helpers.js';

/** Fields of a trigger as answered: `id`, the `token`, its public `url` and times (`called_at` the last call). */
const triggerFields = {
  id: Type.Integer(),
  token: Type.String(),
  url: Type.String(),
  called_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: NullableTimestamp,
};

/** The trigger of a check (`/v1/triggers/checks/{checkId}`). */
export const CheckTriggerSchema = Type.Object({ ...triggerFields, checkId: Type.String() });

/** The trigger of a check group (`/v1/triggers/check-groups/{groupId}`). */
export const GroupTriggerSchema = Type.Object({ ...triggerFields, groupId: Type.Integer() });

/** Path parameter `checkId`. */
export { CheckIdParams };

/** Path parameter `groupId`: 1 to 2^31−1, as check group ids are. */
export const GroupIdParams = Type.Object(
  { groupId: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) },
  strict,
);

/** What a call of a trigger URL answers: the check sessions it started, one per check run. */
export const TriggerCallSchema = Type.Object({ checkSessionIds: Type.Array(Type.String()) });
