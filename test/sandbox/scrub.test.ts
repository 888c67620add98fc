import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SCRUBBED, Scrubber, secretForms } from '../../src/sandbox/scrub.js';

describe('Scrubber', () => {
  it('replaces a secret and its URL-encoded (! as %21), form-encoded, JSON-escaped and base64 forms', () => {
    const secret = 'p@ss word!"x';
    const s = new Scrubber([secret]);
    const forms = [
      secret,
      encodeURIComponent(secret),
      'p%40ss%20word%21%22x',
      'p%40ss+word%21%22x',
      'p@ss word!\\"x',
      Buffer.from(secret).toString('base64'),
    ];
    for (const form of forms) expect(s.text(`before ${form} after`), form).toBe(`before ${SCRUBBED} after`);
    expect(secretForms(secret)).toContain('p%40ss%20word%21%22x');
  });

  it('replaces a longer secret whole when it contains a shorter one', () => {
    const s = new Scrubber(['abc', 'abcdef']);
    expect(s.text('xabcdefx abc')).toBe(`x${SCRUBBED}x ${SCRUBBED}`);
  });

  it('ignores values too short to scrub and cuts values over 128 KB', () => {
    const s = new Scrubber(['', 'a', 'ab']);
    expect(s.size).toBe(0);
    expect(s.text('a ab')).toBe('a ab');
    const long = 'x'.repeat(200_000);
    expect(new Scrubber([long]).text(long)).not.toContain('x'.repeat(131_073));
  });

  it('masks bytes with the same length so binary formats stay valid', () => {
    const s = new Scrubber(['secret-1']);
    const input = Buffer.concat([
      Buffer.from([0, 1, 2]),
      Buffer.from('secret-1'),
      Buffer.from([3]),
      Buffer.from('secret-1'),
    ]);
    const out = s.bytes(input);
    expect(out.length).toBe(input.length);
    expect(out.includes('secret-1')).toBe(false);
    expect(out.subarray(3, 11).toString()).toBe('********');
    expect(input.includes('secret-1')).toBe(true);
  });

  it('scrubs every string of a value and the values of credential headers', () => {
    const s = new Scrubber(['tok-123']);
    const scrubbed = s.value({
      msg: 'token tok-123',
      list: [
        { key: 'Authorization', value: 'Basic abc' },
        { key: 'x-plain', value: 'visible' },
      ],
      headers: { cookie: 'a=b', 'x-other': 'tok-123' },
      n: 5,
    });
    expect(scrubbed).toEqual({
      msg: `token ${SCRUBBED}`,
      list: [
        { key: 'Authorization', value: SCRUBBED },
        { key: 'x-plain', value: 'visible' },
      ],
      headers: { cookie: SCRUBBED, 'x-other': SCRUBBED },
      n: 5,
    });
  });

  it('never leaves a planted secret in any text (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 3, maxLength: 40 }),
        fc.string(),
        fc.string(),
        (secret, before, after) => {
          const out = new Scrubber([secret]).text(`${before}${secret}${after}`);
          expect(out.includes(secret)).toBe(false);
        },
      ),
    );
  });
});
