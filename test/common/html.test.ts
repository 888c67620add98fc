import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../../src/common/html.js';

describe('escapeHtml', () => {
  it('escapes & < > " and \' as entities, once each', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });

  it('escapes an entity already written again (the text is text, not HTML)', () => {
    expect(escapeHtml('R&amp;D')).toBe('R&amp;amp;D');
  });

  it('keeps every other character as written, = and ` included', () => {
    const plain = 'a=b `c` é 😀 \u0001 ]] /\\';
    expect(escapeHtml(plain)).toBe(plain);
    expect(escapeHtml('')).toBe('');
  });

  it('leaves nothing that could open a tag or end a quoted attribute', () => {
    const out = escapeHtml(`"><script>alert('x')</script><img src='`);
    expect(out).not.toMatch(/[<>"']/);
  });
});
