import fastJsonStringify from 'fast-json-stringify';
import { describe, expect, it } from 'vitest';

type FjsSchema = Parameters<typeof fastJsonStringify>[0];
import { CheckResponseSchema } from '../../../../src/service/checks/responses.js';
import { CHECK_TYPE_REGISTRY } from '../../../../src/service/checks/types/registry.js';
import {
  cachedSerializerCompiler,
  discriminatorOf,
} from '../../../../src/service/platform/http/serializers.js';

// A discriminated union is written by the serializer of the branch its discriminator names, not by
// fast-json-stringify's validate-each-branch: the bytes must be the ones fast-json-stringify writes, for every
// branch, with fields the schema leaves out dropped, and a value no branch is named for must be written or
// refused exactly as before.

const UNION = {
  title: 'Shape',
  oneOf: [
    {
      type: 'object',
      properties: {
        kind: { type: 'string', enum: ['circle'] },
        radius: { type: 'number' },
        label: { type: ['string', 'null'] },
      },
      required: ['kind', 'radius'],
      additionalProperties: false,
    },
    {
      type: 'object',
      properties: {
        kind: { const: 'square' },
        side: { type: 'integer' },
        corners: { type: 'array', items: { type: 'object', properties: { x: { type: 'number' } } } },
      },
      required: ['kind', 'side'],
    },
    {
      type: 'object',
      properties: { kind: { const: 'dot' }, at: { type: 'string', format: 'date-time' } },
      required: ['kind'],
      additionalProperties: true,
    },
  ],
};

/** A deterministic pseudo-random sequence. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function shapes(count: number): Record<string, unknown>[] {
  const next = random(7);
  return Array.from({ length: count }, (_, i) => {
    const roll = next();
    if (roll < 0.33) {
      return { kind: 'circle', radius: next() * 10, label: i % 3 === 0 ? null : `c"${i}\u2028` };
    }
    if (roll < 0.66)
      return { kind: 'square', side: i, corners: [{ x: next(), y: 1 }], secret: { deep: true } };
    return { kind: 'dot', at: new Date(1_700_000_000_000 + i), note: `n${i}` };
  });
}

describe('cachedSerializerCompiler', () => {
  it('finds the property that tells branches apart, and none where branches share a value or refer elsewhere', () => {
    expect(discriminatorOf(UNION.oneOf)).toEqual({ key: 'kind', values: ['circle', 'square', 'dot'] });
    const shared = [UNION.oneOf[0], { ...UNION.oneOf[1], properties: { kind: { const: 'circle' } } }];
    expect(discriminatorOf(shared)).toBeNull();
    const optional = [UNION.oneOf[0], { ...UNION.oneOf[1], required: ['side'] }];
    expect(discriminatorOf(optional)).toBeNull();
    expect(
      discriminatorOf([UNION.oneOf[0], { ...UNION.oneOf[1], properties: { kind: { $ref: '#/x' } } }]),
    ).toBeNull();
    const checkTypes = CHECK_TYPE_REGISTRY.map((entry) => entry.checkType);
    expect(discriminatorOf(CheckResponseSchema.oneOf as unknown[])).toEqual({
      key: 'checkType',
      values: checkTypes,
    });
  });

  it('writes the bytes fast-json-stringify writes, one value and a list, fields outside the schema dropped', () => {
    const values = shapes(300);
    const one = cachedSerializerCompiler({ schema: structuredClone(UNION) });
    const reference = fastJsonStringify(UNION as unknown as FjsSchema);
    for (const value of values) expect(one(value)).toBe(reference(value));
    const squares = values.filter((value) => value.kind === 'square');
    expect(squares.length).toBeGreaterThan(50);
    for (const square of squares) expect(one(square)).not.toContain('secret');

    const list = { type: 'array', items: structuredClone(UNION) };
    const listReference = fastJsonStringify(list as unknown as FjsSchema);
    expect(cachedSerializerCompiler({ schema: list })(values)).toBe(listReference(values));
    expect(cachedSerializerCompiler({ schema: list })([])).toBe('[]');
  });

  it('writes or refuses a value no branch is named for as fast-json-stringify does', () => {
    const one = cachedSerializerCompiler({ schema: structuredClone(UNION) });
    const reference = fastJsonStringify(UNION as unknown as FjsSchema);
    for (const odd of [{ kind: 'hexagon', side: 1 }, { radius: 2 }, null, 'text', 3]) {
      let expected: string | Error;
      try {
        expected = reference(odd);
      } catch (err) {
        expected = err as Error;
      }
      if (typeof expected === 'string') expect(one(odd)).toBe(expected);
      else expect(() => one(odd)).toThrow(expected.message);
    }
    // A value its discriminator names a branch for is written by that branch, as a discriminator means in
    // OpenAPI, even where it does not validate against it: fast-json-stringify refused a circle with a field
    // its branch forbids (no branch validates), the branch writes it without that field.
    const extra = { kind: 'circle', radius: 1, label: null, secret: 'x' };
    expect(() => reference(extra)).toThrow(TypeError);
    expect(one(extra)).toBe('{"kind":"circle","radius":1,"label":null}');
    const list = { type: 'array', items: structuredClone(UNION) };
    const serialize = cachedSerializerCompiler({ schema: list });
    expect(() => serialize([{ kind: 'circle', radius: 1 }, { kind: 'hexagon' }])).toThrow(TypeError);
  });

  it('leaves any other schema to fast-json-stringify, and compiles a schema object once', () => {
    const schema = {
      type: 'object',
      properties: { a: { anyOf: [{ type: 'integer' }, { type: 'string' }] } },
    };
    const serialize = cachedSerializerCompiler({ schema });
    expect(serialize({ a: 'x', b: 1 })).toBe('{"a":"x"}');
    expect(cachedSerializerCompiler({ schema })).toBe(serialize);
    // Keywords beside the union that fast-json-stringify merges into each branch: not taken apart.
    const merged = { ...structuredClone(UNION), properties: { extra: { type: 'string' } } };
    const mergedReference = fastJsonStringify(merged as unknown as FjsSchema);
    const value = { kind: 'square', side: 2, extra: 'kept' };
    expect(cachedSerializerCompiler({ schema: merged })(value)).toBe(mergedReference(value));
  });
});
