import { Type } from '@sinclair/typebox';
import { IP_FAMILIES, TCP_ASSERTION_SOURCES } from '../../../protocol/index.js';
import { Nullable, StringEnum, strict } from '../../platform/http/schema-helpers.js';
import { assertions, TCP_FREQUENCIES, uptimeCreateBody, zeroRequestFields } from './common.js';

/** TCP request (docs/checks.md, "TCP"): `hostname` without scheme or port. */
export const TcpRequestBodySchema = Type.Object(
  {
    hostname: Type.String({
      minLength: 1,
      maxLength: 2048,
      pattern: '^[^\\s/:]+$|^[0-9A-Fa-f.]*:[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*$',
    }),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    data: Type.Optional(Nullable(Type.String({ maxLength: 65_536, default: null }))),
    ipFamily: Type.Optional(StringEnum(IP_FAMILIES, { default: 'IPv4' })),
    assertions: assertions(TCP_ASSERTION_SOURCES),
    url: zeroRequestFields.url,
    body: zeroRequestFields.body,
  },
  strict,
);

/** `POST /v1/checks/tcp`: degraded 4000 ms, max 5000 ms by default; sub-minute frequency allowed. */
export const CreateTcpCheckBody = uptimeCreateBody(TcpRequestBodySchema, TCP_FREQUENCIES, 4000, 5000);
