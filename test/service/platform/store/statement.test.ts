import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../../../src/service/platform/http/auth.js';
import type { Database } from '../../../../src/service/platform/store/database.js';
import { Statement } from '../../../../src/service/platform/store/statement.js';
import { TEST_DATABASE, testStore } from '../../../helpers/service.js';

// Statements built and compiled once per dialect, then run with new values (the statements of every ping and
// every result): the same SQL Kysely compiles each time, the values bound where the placeholders landed, the
// constants of the build kept, and a build that turns a value into text refused.

describe('statements built once', () => {
  let store: Awaited<ReturnType<typeof testStore>>;
  let accountId: string;
  beforeAll(async () => {
    store = await testStore();
    accountId = await createAccount(store.db, 'statements');
  });
  afterAll(async () => {
    await store?.drop();
  });

  const upsertSetting = new Statement(
    (db: Kysely<Database>, v: { accountId: string; doc: string; nowMs: number }) =>
      db
        .insertInto('account_settings')
        .values({ account_id: v.accountId, doc: v.doc, updated_at: v.nowMs })
        .onConflict((oc) => oc.column('account_id').doUpdateSet({ doc: v.doc, updated_at: v.nowMs })),
  );
  const settingOf = new Statement((db: Kysely<Database>, v: { accountId: string }) =>
    db
      .selectFrom('account_settings')
      .select(['doc', 'updated_at'])
      .where('account_id', '=', v.accountId)
      // A constant of the build: kept as the store compiles it.
      .limit(1),
  );

  it('compiles the SQL Kysely compiles, with the values where their placeholders were', () => {
    const { db } = store;
    const values = { accountId, doc: '{"a":1}', nowMs: 1_700_000_000_000 };
    const built = db
      .insertInto('account_settings')
      .values({ account_id: values.accountId, doc: values.doc, updated_at: values.nowMs })
      .onConflict((oc) => oc.column('account_id').doUpdateSet({ doc: values.doc, updated_at: values.nowMs }))
      .compile();
    const once = upsertSetting.compile(db, values);
    expect(once.sql).toBe(built.sql);
    expect(once.parameters).toEqual(built.parameters);
    // The second time: the same SQL text (one prepared statement), the new values.
    const again = upsertSetting.compile(db, { accountId: 'other', doc: '{}', nowMs: 5 });
    expect(again.sql).toBe(once.sql);
    expect(again.parameters).toEqual(['other', '{}', 5, '{}', 5]);
    // The constant stays where the store's compiler puts it: a parameter on PostgreSQL, in the SQL on SQLite
    // (a bound LIMIT makes SQLite prepare the statement again on every run).
    const constant = db
      .selectFrom('account_settings')
      .select(['doc', 'updated_at'])
      .where('account_id', '=', accountId)
      .limit(1)
      .compile();
    expect(settingOf.compile(db, { accountId })).toMatchObject({
      sql: constant.sql,
      parameters: constant.parameters,
    });
    expect(constant.parameters).toEqual(TEST_DATABASE === 'postgres' ? [accountId, 1] : [accountId]);
  });

  it('runs in the store and in a transaction, which sees its own writes and rolls them back', async () => {
    const { db } = store;
    await upsertSetting.run(db, { accountId, doc: '{"v":1}', nowMs: 1 });
    expect(await settingOf.first(db, { accountId })).toEqual({ doc: '{"v":1}', updated_at: 1 });
    await upsertSetting.run(db, { accountId, doc: '{"v":2}', nowMs: 2 });
    expect(await settingOf.rows(db, { accountId })).toEqual([{ doc: '{"v":2}', updated_at: 2 }]);
    await expect(
      db.transaction().execute(async (tx) => {
        await upsertSetting.run(tx, { accountId, doc: '{"v":3}', nowMs: 3 });
        expect(await settingOf.first(tx, { accountId })).toEqual({ doc: '{"v":3}', updated_at: 3 });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await settingOf.first(db, { accountId })).toEqual({ doc: '{"v":2}', updated_at: 2 });
    expect(await settingOf.first(db, { accountId: 'nobody' })).toBeUndefined();
  });

  it('binds undefined as NULL', async () => {
    const { db } = store;
    const nullable = new Statement((on: Kysely<Database>, v: { value: string | null | undefined }) =>
      on.selectNoFrom((eb) => eb.val(v.value).as('value')),
    );
    expect(await nullable.first(db, { value: undefined })).toEqual({ value: null });
    expect(await nullable.first(db, { value: 'x' })).toEqual({ value: 'x' });
  });

  it('refuses a build that turns a value into text, the first time it runs', () => {
    const { db } = store;
    const wrong = new Statement((on: Kysely<Database>, v: { column: string }) =>
      on.selectFrom('accounts').select(sql.raw(`${v.column}`).as('x')),
    );
    expect(() => wrong.compile(db, { column: 'name' })).toThrow(/a statement turned a value into text/);
  });
});
