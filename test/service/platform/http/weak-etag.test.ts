import { describe, expect, it } from 'vitest';
import { weakEtag } from '../../../../src/service/platform/http/conditional.js';

// An ETag vouches for an answer: two different lists of parts must never get the same tag.

describe('weakEtag', () => {
  it('is a weak tag of 22 base64url characters, the same for the same parts', () => {
    const tag = weakEtag(['checks', 'acct-1', '', '[{"id":1}]']);
    expect(tag).toMatch(/^W\/"[A-Za-z0-9_-]{22}"$/);
    expect(weakEtag(['checks', 'acct-1', '', '[{"id":1}]'])).toBe(tag);
  });

  it('tells apart parts that join to the same text, a string from its JSON, and lone surrogates', () => {
    const lists: unknown[][] = [
      ['ab', 'c'],
      ['a', 'bc'],
      ['abc'],
      ['abc', ''],
      ['1'],
      [1],
      ['"1"'],
      ['null'],
      [null],
      [undefined],
      [['a', 'b']],
      ['\uD800'],
      ['\uD801'],
      ['\uFFFD'],
      ['x\uDC00'],
      ['s1:a'],
      ['j3:"a"'],
    ];
    const tags = lists.map((parts) => weakEtag(parts));
    expect(new Set(tags).size).toBe(lists.length);
  });

  it('moves with any change to a large answer', () => {
    const body = JSON.stringify(Array.from({ length: 10_000 }, (_, i) => ({ id: i, name: `check "${i}"` })));
    const changed = body.replace('check \\"5000\\"', 'check \\"5001\\"');
    expect(changed).not.toBe(body);
    expect(weakEtag(['checks', body])).not.toBe(weakEtag(['checks', changed]));
  });
});
