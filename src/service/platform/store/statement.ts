import type { Compilable, CompiledQuery, Kysely, QueryResult } from 'kysely';

/**
 * Statements built and compiled once, then run with new values: for the statements the service runs for every
 * ping and every result (a heartbeat's row, the result and its rollups, the alerting reads).
 *
 * Kysely builds a query as a tree of immutable nodes and compiles the tree to SQL each time it runs. For a
 * statement as cheap as one row by primary key on SQLite, building and compiling cost more than the statement
 * itself: about a fifth of the service's CPU per heartbeat ping. A {@link Statement} builds its query once per
 * dialect with placeholders where the values go, keeps the SQL and where each placeholder landed among the
 * parameters, and from then on runs that SQL with the values given. The SQL is the same text Kysely would
 * compile each time (so the SQLite statement cache and PostgreSQL's named prepared statements see one shape).
 *
 * What a statement's `build` may do: use each parameter as a value (a column's value, a comparison's operand,
 * a `limit`), anywhere Kysely turns a value into a bound parameter. What it may not: look at a parameter
 * (branch on it, spread it, take its length, pass it to `in`): the parameters are placeholders when `build`
 * runs, so the shape it builds must not depend on them. A placeholder that ends up anywhere but among the
 * bound parameters (turned into text) is caught when the statement is compiled.
 */

/** Marks the placeholder objects a statement is built with; never a value a caller can make. */
const PLACEHOLDER = Symbol('outpost statement placeholder');

type Placeholder = { readonly [PLACEHOLDER]: string };

function isPlaceholder(value: unknown): value is Placeholder {
  return typeof value === 'object' && value !== null && PLACEHOLDER in value;
}

/** Where each bound parameter of the compiled SQL comes from: a value's name, or a constant of `build`. */
type Slot = { name: string } | { constant: unknown };

type Template = { compiled: CompiledQuery; slots: readonly Slot[] };

/** The values of a statement's parameters, by name. */
export type StatementValues = Record<string, unknown>;

/**
 * A statement of the store built once per dialect (see the file comment).
 *
 * @typeParam DB the store's tables (Database).
 * @typeParam V the values it is run with, by name; each must be a value Kysely binds (string, number,
 *   bigint, boolean, null, Buffer); `undefined` is bound as NULL.
 * @typeParam R a row of its answer.
 */
export class Statement<DB, V extends StatementValues, R> {
  readonly #build: (db: Kysely<DB>, values: V) => Compilable<R>;
  /** By the dialect's adapter class: the SQL a dialect compiles depends on nothing else. */
  readonly #templates = new Map<unknown, Template>();

  /**
   * @param build makes the query from `db` (any handle of the dialect) and `values`, which are placeholders
   *   while it runs: it must use them as values only (see the file comment).
   */
  constructor(build: (db: Kysely<DB>, values: V) => Compilable<R>) {
    this.#build = build;
  }

  /** The SQL and parameters this statement runs with `values` on `db`'s dialect. */
  compile(db: Kysely<DB>, values: V): CompiledQuery<R> {
    const template = this.#template(db);
    const parameters = template.slots.map((slot) => {
      if ('constant' in slot) return slot.constant;
      return values[slot.name] ?? null;
    });
    return { ...template.compiled, parameters } as CompiledQuery<R>;
  }

  /** Runs it in `db` (a store handle or a transaction). @throws the store's error. */
  run(db: Kysely<DB>, values: V): Promise<QueryResult<R>> {
    return db.executeQuery(this.compile(db, values));
  }

  /** Its answer's rows. @throws the store's error. */
  async rows(db: Kysely<DB>, values: V): Promise<R[]> {
    return (await this.run(db, values)).rows;
  }

  /** Its answer's first row, undefined when none. @throws the store's error. */
  async first(db: Kysely<DB>, values: V): Promise<R | undefined> {
    return (await this.run(db, values)).rows[0];
  }

  #template(db: Kysely<DB>): Template {
    const dialect = db.getExecutor().adapter.constructor;
    let template = this.#templates.get(dialect);
    if (template === undefined) {
      template = compileTemplate(db, this.#build);
      this.#templates.set(dialect, template);
    }
    return template;
  }
}

/**
 * Builds and compiles the query with placeholders for its values.
 * @throws Error when a placeholder did not end up as a bound parameter (`build` looked at a value or turned
 *   it into text), which is a bug of the statement, found the first time it runs.
 */
function compileTemplate<DB, V extends StatementValues, R>(
  db: Kysely<DB>,
  build: (db: Kysely<DB>, values: V) => Compilable<R>,
): Template {
  const placeholders = new Proxy({} as V, {
    get(_target, name) {
      if (typeof name !== 'string') return undefined;
      return Object.freeze({ [PLACEHOLDER]: name });
    },
  });
  const compiled = build(db, placeholders).compile();
  if (compiled.sql.includes('[object Object]')) {
    throw new Error(`a statement turned a value into text: ${compiled.sql.slice(0, 200)}`);
  }
  const slots = compiled.parameters.map(
    (parameter): Slot =>
      isPlaceholder(parameter) ? { name: parameter[PLACEHOLDER] } : { constant: parameter },
  );
  return { compiled: { ...compiled, parameters: [] }, slots };
}
