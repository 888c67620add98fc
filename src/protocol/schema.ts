import { Type } from '@sinclair/typebox';

/**
 * `t` or null: the schema `Type.Union([t, Type.Null()])`, whose static type is `Static<t> | null`.
 * The protocol's one way of writing a field that is always present but may hold no value (a timing
 * that was never reached, a certificate that was never seen), as opposed to `Type.Optional`, a field
 * that may be absent.
 */
export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()]);
