import { Type } from '@sinclair/typebox';

/**
 * A TypeBox union of string literals (the wire protocol's enumerations, the agent's and the
 * service's configuration schemas): TypeBox's own `Value.Check`/`Value.Errors` check it, and its
 * static type is the union of `values`.
 * Takes `readonly T[]`, not `T extends readonly string[]`: `.map` on the latter widens the literals to string.
 */
export const literals = <T extends string>(values: readonly T[]) =>
  Type.Union(values.map((v) => Type.Literal(v)));
