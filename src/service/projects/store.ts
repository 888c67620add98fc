import type { Kysely } from 'kysely';
import type { Database } from '../platform/store/database.js';
import type { ProjectResourceTable, ProjectTable } from '../platform/store/schema.js';

/** A project row (migration 0022). */
export type ProjectRow = ProjectTable;
/** A row of a project's resource map: construct type and logical id → the API's id. */
export type ProjectResourceRow = Pick<ProjectResourceTable, 'type' | 'logical_id' | 'physical_id'>;

/** The `projects` and `project_resources` tables' queries (docs/api.md, "Projects (monitoring as code)"). */
export class ProjectQueries {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** The account's project whose logical id is `logicalId`; undefined when there is none. */
  find(accountId: string, logicalId: string): Promise<ProjectRow | undefined> {
    return this.#db
      .selectFrom('projects')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('logical_id', '=', logicalId)
      .executeTakeFirst();
  }

  /** The account's projects, oldest first. */
  list(accountId: string): Promise<ProjectRow[]> {
    return this.#db
      .selectFrom('projects')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /** Stores a new project. */
  async insert(row: ProjectRow): Promise<void> {
    await this.#db.insertInto('projects').values(row).execute();
  }

  /** Sets a project's name and repository URL, and `updated_at` to `nowMs` (epoch ms). */
  async update(id: string, name: string, repoUrl: string | null, nowMs: number): Promise<void> {
    await this.#db
      .updateTable('projects')
      .set({ name, repo_url: repoUrl, updated_at: nowMs })
      .where('id', '=', id)
      .execute();
  }

  /** The project's resource map, by type then logical id. */
  resources(projectId: string): Promise<ProjectResourceRow[]> {
    return this.#db
      .selectFrom('project_resources')
      .select(['type', 'logical_id', 'physical_id'])
      .where('project_id', '=', projectId)
      .orderBy('type')
      .orderBy('logical_id')
      .execute();
  }

  /** Replaces the project's resource map with `rows`, in one transaction, at `nowMs` (epoch ms). */
  async replaceResources(
    projectId: string,
    rows: readonly ProjectResourceRow[],
    nowMs: number,
  ): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx.deleteFrom('project_resources').where('project_id', '=', projectId).execute();
      if (rows.length > 0) {
        await trx
          .insertInto('project_resources')
          .values(rows.map((row) => ({ ...row, project_id: projectId, created_at: nowMs })))
          .execute();
      }
    });
  }

  /** Deletes the project and its resource map (not the resources themselves). */
  async delete(id: string): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx.deleteFrom('project_resources').where('project_id', '=', id).execute();
      await trx.deleteFrom('projects').where('id', '=', id).execute();
    });
  }
}
