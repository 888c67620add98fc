import { describe, expect, it } from 'vitest';
import { lenientDecode, urlCredentialForms } from '../../src/common/uri.js';

describe('lenientDecode', () => {
  it('decodes valid percent-encoding as decodeURIComponent does', () => {
    for (const text of ['p%40ss', '%E2%82%AC100', 'plain', '', '%F0%9F%98%80', 'a%2Fb%3Fc%3Dd']) {
      expect(lenientDecode(text)).toBe(decodeURIComponent(text));
    }
  });

  it('leaves + as written (component decoding, not form decoding)', () => {
    expect(lenientDecode('a+b%20c')).toBe('a+b c');
  });

  it.each([
    ['a lone %', '100%', '100%'],
    ['a % before non-hex', 'pass-%zz-Secret12', 'pass-%zz-Secret12'],
    ['a cut UTF-8 sequence', 'pass-%E0%A4%A-Secret', 'pass-%E0%A4%A-Secret'],
    ['a lone surrogate', 'x%ED%A0%80y', 'x%ED%A0%80y'],
  ])('keeps %s as written, never throwing', (_name, text, expected) => {
    expect(() => decodeURIComponent(text)).toThrow(URIError);
    expect(lenientDecode(text)).toBe(expected);
  });

  it('decodes the valid runs of a text that has a malformed escape elsewhere', () => {
    expect(lenientDecode('100%-%41%42')).toBe('100%-AB');
    expect(lenientDecode('%zz%E2%82%AC')).toBe('%zz€');
  });

  it('keeps a whole run of escapes as written when the run is not valid UTF-8 as a whole', () => {
    expect(lenientDecode('%41%E0%A4 %42')).toBe('%41%E0%A4 B');
  });
});

describe('urlCredentialForms', () => {
  it('gives the password and the user as written and decoded, and user:password as written', () => {
    const forms = urlCredentialForms(new URL('https://ap%40i:p%2Fss%zz@example.test/hook'));
    expect(forms.sort()).toEqual(['ap%40i', 'ap%40i:p%2Fss%zz', 'ap@i', 'p%2Fss%zz', 'p/ss%zz'].sort());
  });

  it('leaves out empty parts and repeats nothing', () => {
    expect(urlCredentialForms(new URL('https://example.test/'))).toEqual([]);
    expect(urlCredentialForms(new URL('https://key@example.test/'))).toEqual(['key']);
    expect(urlCredentialForms(new URL('https://:secret@example.test/'))).toEqual(['secret', ':secret']);
  });
});
