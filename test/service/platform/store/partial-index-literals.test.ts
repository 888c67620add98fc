import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openSqliteDatabase } from '../../../../src/service/platform/store/database.js';
import { Statement } from '../../../../src/service/platform/store/statement.js';

// SQLite plans a statement again at every bind when it compares a column with a bound value and a partial index's
// condition compares that column with a constant (it decides with the value whether the index can serve). The
// store's SQLite compiler writes such values into the SQL (LiteralSqliteCompiler, platform/store/database.ts).

let db: Kysely<Database>;
beforeAll(async () => {
  db = await openSqliteDatabase(':memory:');
});
afterAll(async () => db.destroy());

describe('values compared with a partial index condition on the SQLite store', () => {
  it('are written for every column the schema has such an index on, and for no other', async () => {
    const indexes = await sql<{ sql: string }>`
      select sql from sqlite_master where type = 'index' and sql like '% where %'`.execute(db);
    const columns = new Set<string>();
    for (const { sql: text } of indexes.rows) {
      const condition = text.slice(text.search(/ where /i));
      for (const m of condition.matchAll(/"?(\w+)"?\s*=\s*(?:'[^']*'|\d+)/g)) columns.add(m[1]!);
    }
    expect([...columns].sort()).toEqual(['details_settled', 'result_type']);
    for (const column of columns) {
      const value = column === 'result_type' ? 'FINAL' : 0;
      const compiled = db
        .selectFrom('check_results')
        .select('id')
        .where(`check_results.${column}` as 'check_results.result_type', '=', value as 'FINAL')
        .where('check_id', '=', 'c1')
        .compile();
      expect(compiled.sql).toContain(`"check_results"."${column}" = ${value === 'FINAL' ? "'FINAL'" : '0'}`);
      expect(compiled.parameters).toEqual(['c1']);
    }
    // Another column stays bound, and so does another operator on these.
    const other = db
      .selectFrom('check_results')
      .select('id')
      .where('status', '=', 'FAILED')
      .where('result_type', '!=', 'ATTEMPT')
      .compile();
    expect(other.parameters).toEqual(['FAILED', 'ATTEMPT']);
  });

  it('are written in a Statement built once, whose values stay bound, and the statement runs', async () => {
    const newer = new Statement((q: Kysely<Database>, v: { checkId: string; startedAtMs: number }) =>
      q
        .selectFrom('check_results')
        .select('id')
        .where('check_id', '=', v.checkId)
        .where('started_at', '>', v.startedAtMs)
        .where('result_type', '=', 'FINAL')
        .limit(1),
    );
    const compiled = newer.compile(db, { checkId: 'c1', startedAtMs: 5 });
    expect(compiled.sql).toContain(`"result_type" = 'FINAL'`);
    expect(compiled.parameters).toEqual(['c1', 5]);
    expect(await newer.rows(db, { checkId: 'c1', startedAtMs: 5 })).toEqual([]);
    const text = db
      .selectFrom('check_results')
      .select('id')
      .where('result_type', '=', "FIN'AL" as 'FINAL')
      .compile();
    // A quote in a value is doubled, as in any string literal Kysely writes.
    expect(text.sql).toContain(`"result_type" = 'FIN''AL'`);
    expect(text.parameters).toEqual([]);
  });
});
