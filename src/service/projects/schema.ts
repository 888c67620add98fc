import { type Static, Type } from '@sinclair/typebox';
import { strict } from '../platform/http/schema-helpers.js';

/** A project's logical id: what `checkly.config.ts` names it, unique per account. */
const LogicalId = Type.String({ minLength: 1, maxLength: 255 });

/** Body of `POST /next/projects`, and the `project` of a deploy: its logical id, name and repository URL. */
export const ProjectBodySchema = Type.Object(
  {
    logicalId: LogicalId,
    name: Type.String({ minLength: 1, maxLength: 255 }),
    repoUrl: Type.Optional(Type.Union([Type.String({ maxLength: 2048 }), Type.Null()])),
  },
  strict,
);
export type ProjectBody = Static<typeof ProjectBodySchema>;

/** A project as the routes answer it; times are ISO 8601. */
export const ProjectSchema = Type.Object(
  {
    id: Type.String(),
    logicalId: Type.String(),
    name: Type.String(),
    repoUrl: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  strict,
);

/** Path of `GET` and `DELETE /next/projects/{logicalId}`. */
export const ProjectParams = Type.Object({ logicalId: LogicalId }, strict);

/** Query of `DELETE /next/projects/{logicalId}`: `preserveResources` keeps the project's resources. */
export const DeleteProjectQuery = Type.Object(
  { preserveResources: Type.Boolean({ default: false }) },
  strict,
);

/** Query of the deploy: `dryRun` changes nothing; `scheduleOnDeploy` is accepted (checks run as `activated` says). */
export const DeployQuery = Type.Object(
  {
    dryRun: Type.Boolean({ default: false }),
    scheduleOnDeploy: Type.Boolean({ default: true }),
  },
  strict,
);

/**
 * One resource of a deploy (the CLI's construct, synthesized): its construct `type`, `logicalId`, whether the
 * project owns it (`member`; false for a reference to a resource made elsewhere, which `physicalId` names) and
 * the `payload` the construct's API route takes, with `{"ref": "<logicalId>"}` where it names another resource.
 * Each payload is validated by the route it goes to.
 */
export const DeployResourceSchema = Type.Object(
  {
    logicalId: Type.String({ minLength: 1, maxLength: 512 }),
    type: Type.String({ minLength: 1, maxLength: 64 }),
    member: Type.Optional(Type.Boolean()),
    physicalId: Type.Optional(Type.Union([Type.String(), Type.Integer(), Type.Null()])),
    payload: Type.Record(Type.String(), Type.Unknown()),
  },
  { additionalProperties: false },
);
export type DeployResource = Static<typeof DeployResourceSchema>;

/**
 * Body of `POST /next-v2/projects/deploy` (what `checkly deploy` sends, gzip-compressed): the project, its
 * resources, and what the CLI adds that Outpost does not use (`sharedFiles`, `repoInfo`).
 */
export const DeployBodySchema = Type.Object(
  {
    project: ProjectBodySchema,
    resources: Type.Array(DeployResourceSchema, { maxItems: 2000 }),
    sharedFiles: Type.Optional(Type.Array(Type.Unknown())),
    repoInfo: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  },
  strict,
);
export type DeployBody = Static<typeof DeployBodySchema>;

/** One change of a deploy, as the CLI prints it: `physicalId` is the resource's id in the API. */
export const DeployChangeSchema = Type.Object(
  {
    type: Type.String(),
    logicalId: Type.String(),
    physicalId: Type.Union([Type.String(), Type.Integer(), Type.Null()]),
    action: Type.Union([Type.Literal('CREATE'), Type.Literal('UPDATE'), Type.Literal('DELETE')]),
  },
  strict,
);
export type DeployChange = Static<typeof DeployChangeSchema>;

/** Answer of the deploy: the project and every change, in the order applied. */
export const DeployAnswerSchema = Type.Object(
  { project: ProjectSchema, diff: Type.Array(DeployChangeSchema) },
  strict,
);
