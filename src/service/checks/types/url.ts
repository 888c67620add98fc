import { Type } from '@sinclair/typebox';
import { IP_FAMILIES, URL_ASSERTION_SOURCES } from '../../../protocol/index.js';
import { StringEnum, strict } from '../../platform/http/schema-helpers.js';
import { assertions, MINUTE_FREQUENCIES, uptimeCreateBody, zeroRequestFields } from './common.js';

/** URL request (docs/checks.md, "URL"): GET only, http or https. */
export const UrlRequestBodySchema = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$' }),
    method: Type.Optional(StringEnum(['GET'] as const, { default: 'GET' })),
    followRedirects: Type.Optional(Type.Boolean({ default: true })),
    skipSSL: Type.Optional(Type.Boolean({ default: false })),
    ipFamily: Type.Optional(StringEnum(IP_FAMILIES, { default: 'IPv4' })),
    assertions: assertions(URL_ASSERTION_SOURCES),
    body: zeroRequestFields.body,
    bodyType: zeroRequestFields.bodyType,
    headers: zeroRequestFields.headers,
    queryParameters: zeroRequestFields.queryParameters,
    basicAuth: zeroRequestFields.basicAuth,
  },
  strict,
);

/** `POST /v1/checks/url`: degraded 3000 ms, max 5000 ms by default. */
export const CreateUrlCheckBody = uptimeCreateBody(UrlRequestBodySchema, MINUTE_FREQUENCIES, 3000, 5000);
