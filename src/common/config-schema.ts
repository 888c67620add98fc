import { Type } from '@sinclair/typebox';

/**
 * A union of string literals for a configuration schema (the agent's and the service's): TypeBox's
 * own `Value.Errors` checks it, and its static type is the union of `values`.
 * Takes `readonly T[]`, not `T extends readonly string[]`: `.map` on the latter widens the literals to string.
 */
export const literals = <T extends string>(values: readonly T[]) =>
  Type.Union(values.map((v) => Type.Literal(v)));
