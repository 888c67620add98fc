/** An API request with defaults; `overrides` win. */
export function apiRequest(url: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    method: 'GET',
    url,
    headers: [],
    queryParameters: [],
    body: '',
    bodyType: 'NONE',
    basicAuth: null,
    followRedirects: true,
    skipSSL: false,
    ipFamily: 'IPv4',
    assertions: [],
    ...overrides,
  };
}
