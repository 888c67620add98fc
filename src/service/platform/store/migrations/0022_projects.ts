import type { Kysely, Migration } from 'kysely';

/**
 * `0022_projects`: monitoring-as-code projects, deployed by the Checkly CLI (docs/api.md, "Projects (monitoring
 * as code)").
 *
 * - `projects`: one row per project of an account, keyed by the project's `logical_id` (unique per account),
 *   with its name, repository URL and when it was made and last deployed (epoch ms).
 * - `project_resources`: the resources a project's deploys created, one row per (project, construct `type`,
 *   `logical_id`), with the id of the resource the API holds (`physical_id`, text: an integer id is written in
 *   decimal). Deleting a project deletes its rows (the resources themselves are deleted by the route first).
 */
export const projects: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('projects')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('logical_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('repo_url', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint')
      .addUniqueConstraint('projects_account_logical_id', ['account_id', 'logical_id'])
      .execute();
    await db.schema
      .createTable('project_resources')
      .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('logical_id', 'text', (c) => c.notNull())
      .addColumn('physical_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('project_resources_pk', ['project_id', 'type', 'logical_id'])
      .execute();
  },
};
