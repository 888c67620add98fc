export {
  DEFAULT_DNS_TIMEOUT_MS,
  DEFAULT_UDP_PAYLOAD_SIZE_BYTES,
  type DnsQueryOptions,
  type DnsQueryResponse,
  type DnsTransport,
  queryDns,
  queryNameProblem,
  reverseName,
} from './client.js';
export { rcodeName, rcodeNumber, rrTypeName, rrTypeNumber } from './codes.js';
export { DnsQueryError, type DnsQueryErrorCode } from './errors.js';
export { answerText, recordDataJson, recordDataText, toDohJson } from './render.js';
export { FALLBACK_NAME_SERVER, parseResolvConf, RESOLV_CONF_PATH, systemNameServer } from './resolv-conf.js';
export { svcbText } from './svcb.js';
