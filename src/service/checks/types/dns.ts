import { Type } from '@sinclair/typebox';
import { DNS_ASSERTION_SOURCES, DNS_PROTOCOLS, DNS_RECORD_TYPES } from '../../../protocol/index.js';
import { Nullable, StringEnum, strict } from '../../platform/http/schema-helpers.js';
import { assertions, MINUTE_FREQUENCIES, uptimeCreateBody } from './common.js';

/** DNS request (docs/checks.md, "DNS"). */
export const DnsRequestBodySchema = Type.Object(
  {
    recordType: StringEnum(DNS_RECORD_TYPES),
    query: Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\s]+$' }),
    nameServer: Type.Optional(
      Nullable(Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\s/]+$', default: null })),
    ),
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, default: 53 })),
    protocol: Type.Optional(StringEnum(DNS_PROTOCOLS, { default: 'UDP' })),
    assertions: assertions(DNS_ASSERTION_SOURCES),
  },
  strict,
);

/** `POST /v1/checks/dns`: degraded 500 ms, max 1000 ms by default. */
export const CreateDnsCheckBody = uptimeCreateBody(DnsRequestBodySchema, MINUTE_FREQUENCIES, 500, 1000);
