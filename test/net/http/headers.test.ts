import { describe, expect, it } from 'vitest';
import { REDACTED } from '../../../src/common/redaction.js';
import { scrubHeaders } from '../../../src/net/http/index.js';

describe('scrubHeaders', () => {
  it('replaces credential values, whatever their case, and keeps the rest', () => {
    const scrubbed = scrubHeaders({
      Authorization: 'Bearer secret',
      cookie: 'a=1',
      'set-cookie': ['s=1; HttpOnly', 't=2'],
      'X-Api-Key': 'k',
      'proxy-authorization': 'Basic x',
      'content-type': 'text/html',
    });

    expect(scrubbed).toEqual({
      authorization: REDACTED,
      cookie: REDACTED,
      'set-cookie': REDACTED,
      'x-api-key': REDACTED,
      'proxy-authorization': REDACTED,
      'content-type': 'text/html',
    });
  });

  it('joins repeated values and drops absent ones', () => {
    expect(scrubHeaders({ via: ['1.1 a', '1.1 b'], etag: undefined })).toEqual({ via: '1.1 a, 1.1 b' });
  });
});
