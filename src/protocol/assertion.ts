import { type Static, Type } from '@sinclair/typebox';
import { ASSERTION_COMPARISONS, ASSERTION_SOURCES } from './enums.js';

/**
 * An assertion as checks carry it on the wire: `{ source, property, comparison, target, regex }`,
 * `target` always a string (docs/checks.md, "Assertions").
 */
export const AssertionSchema = Type.Object(
  {
    source: Type.Union(ASSERTION_SOURCES.map((s) => Type.Literal(s))),
    property: Type.Optional(Type.String({ maxLength: 1024 })),
    comparison: Type.Union(ASSERTION_COMPARISONS.map((c) => Type.Literal(c))),
    target: Type.Optional(Type.String({ maxLength: 4096 })),
    regex: Type.Optional(Type.Union([Type.String({ maxLength: 1024 }), Type.Null()])),
  },
  { additionalProperties: false },
);
/** An assertion of a check as the wire carries it (see {@link AssertionSchema}): `target` a string, `property` and `regex` optional. */
export type Assertion = Static<typeof AssertionSchema>;

/** One evaluated assertion in a result: the assertion plus what was found and why it failed. */
export const AssertionResultSchema = Type.Object({
  source: Type.String(),
  property: Type.String(),
  comparison: Type.String(),
  target: Type.String(),
  regex: Type.Union([Type.String(), Type.Null()]),
  /** The value found, JSON-encoded when not a string; null when nothing was found. */
  actual: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]),
  /** Why the assertion failed; null when it held. */
  error: Type.Union([Type.String(), Type.Null()]),
});
/** One evaluated assertion of a result (see {@link AssertionResultSchema}): the assertion, `actual` found (null when nothing was), `error` (null when it held). */
export type AssertionResult = Static<typeof AssertionResultSchema>;
