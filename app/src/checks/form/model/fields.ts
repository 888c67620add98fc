/**
 * Which fields of a check the form shows, offers under "Advanced (JSON)" or sends back unchanged, and how a
 * check is split into those and put together again.
 */
import type { Check, CheckType } from '../../../api/schemas.js';
import { type Json, isObject } from './paths.js';
import { isScriptType } from './types.js';

/** Fields the form has controls for on every type that runs on a schedule. */
const SCHEDULED_FIELDS = [
  'name',
  'description',
  'activated',
  'muted',
  'shouldFail',
  'frequency',
  'frequencyOffset',
  'locations',
  'privateLocations',
  'runParallel',
  'tags',
  'groupId',
  'retryStrategy',
  'alertChannelSubscriptions',
  'alertSettings',
  'useGlobalAlertSettings',
  'triggerIncident',
];

/** Top-level fields the form shows with controls, per type; the rest of a check goes to "Advanced (JSON)". */
function controlledFields(type: CheckType): readonly string[] {
  const responseTimes = ['degradedResponseTime', 'maxResponseTime'];
  switch (type) {
    case 'ICMP':
      return [
        ...SCHEDULED_FIELDS,
        ...responseTimes,
        'request',
        'degradedPacketLossThreshold',
        'maxPacketLossThreshold',
      ];
    case 'DNS':
    case 'TCP':
    case 'URL':
    case 'GRPC':
    case 'SSL':
    case 'TRACEROUTE':
      return [...SCHEDULED_FIELDS, ...responseTimes, 'request'];
    case 'API':
      return [
        ...SCHEDULED_FIELDS,
        ...responseTimes,
        'request',
        'runtimeId',
        'environmentVariables',
        'localSetupScript',
        'localTearDownScript',
        'setupSnippetId',
        'tearDownSnippetId',
      ];
    case 'BROWSER':
    case 'MULTI_STEP':
      return [
        ...SCHEDULED_FIELDS,
        'script',
        'runtimeId',
        'environmentVariables',
        'sslCheckDomain',
        'timeoutSeconds',
      ];
    case 'PLAYWRIGHT':
      return [
        ...SCHEDULED_FIELDS,
        'script',
        'scriptPath',
        'dependencies',
        'runtimeId',
        'environmentVariables',
        'sslCheckDomain',
        'timeoutSeconds',
      ];
    case 'AGENTIC':
      return [
        ...SCHEDULED_FIELDS,
        'prompt',
        'agentRuntime',
        'repairMode',
        'runtimeId',
        'environmentVariables',
        'timeoutSeconds',
      ];
    case 'HEARTBEAT':
      return [
        'name',
        'description',
        'activated',
        'muted',
        'tags',
        'groupId',
        'alertChannelSubscriptions',
        'alertSettings',
        'useGlobalAlertSettings',
        'triggerIncident',
        'heartbeat',
      ];
    default:
      return ['name', 'description', 'activated', 'muted', 'tags', 'groupId'];
  }
}

/**
 * Top-level fields neither shown nor offered in "Advanced (JSON)", sent back as they are: `heartbeat` and
 * `script`, which `PUT /v1/checks/{id}` requires for every type although only heartbeat and script checks use
 * them (docs/api.md, "Checks"), and, on a heartbeat monitor, the scheduling fields it stores but never uses.
 */
function hiddenFields(type: CheckType): readonly string[] {
  if (type === 'HEARTBEAT') {
    return [
      'script',
      'frequency',
      'frequencyOffset',
      'locations',
      'privateLocations',
      'runParallel',
      'retryStrategy',
      'shouldFail',
      'doubleCheck',
      'degradedResponseTime',
      'maxResponseTime',
      'runtimeId',
    ];
  }
  return isScriptType(type) ? ['heartbeat'] : ['heartbeat', 'script'];
}

/** Fields of `request` the form shows, per type; the rest goes to "Advanced (JSON)" under `request`. */
function controlledRequestFields(type: CheckType): readonly string[] {
  switch (type) {
    case 'API':
      return [
        'method',
        'url',
        'headers',
        'queryParameters',
        'body',
        'bodyType',
        'basicAuth',
        'followRedirects',
        'skipSSL',
        'ipFamily',
        'assertions',
      ];
    case 'URL':
      return ['url', 'followRedirects', 'skipSSL', 'ipFamily', 'assertions'];
    case 'TCP':
      return ['hostname', 'port', 'data', 'ipFamily', 'assertions'];
    case 'GRPC':
      return ['url', 'port', 'ipFamily', 'skipSSL', 'timeout', 'grpcConfig', 'assertions'];
    case 'DNS':
      return ['query', 'recordType', 'nameServer', 'port', 'protocol', 'assertions'];
    case 'ICMP':
      return ['hostname', 'ipFamily', 'pingCount', 'assertions'];
    case 'SSL':
      return ['sslConfig', 'assertions'];
    case 'TRACEROUTE':
      return [
        'url',
        'protocol',
        'port',
        'ipFamily',
        'maxHops',
        'maxUnknownHops',
        'ptrLookup',
        'timeout',
        'assertions',
      ];
    default:
      return [];
  }
}

/**
 * Fields `PUT /v1/checks/{id}` takes (the service's UpdateCheckBody, strict): a loaded check is reduced to
 * these, so the answer's read-only fields (`id`, `created_at`, `alertChannels`, `pingUrl`, …) are not sent.
 * A field left out keeps its stored value (the update merges), so nothing is lost by this list.
 */
const UPDATE_FIELDS = [
  'name',
  'activated',
  'muted',
  'doubleCheck',
  'shouldFail',
  'locations',
  'tags',
  'alertSettings',
  'useGlobalAlertSettings',
  'groupId',
  'groupOrder',
  'runtimeId',
  'alertChannelSubscriptions',
  'retryStrategy',
  'triggerIncident',
  'runParallel',
  'description',
  'frequencyOffset',
  'scriptPath',
  'sslCheckDomain',
  'environmentVariables',
  'setupSnippetId',
  'tearDownSnippetId',
  'localSetupScript',
  'localTearDownScript',
  'privateLocations',
  'frequency',
  'request',
  'heartbeat',
  'script',
  'dependencies',
  'degradedResponseTime',
  'maxResponseTime',
  'timeoutSeconds',
  'degradedPacketLossThreshold',
  'maxPacketLossThreshold',
  'prompt',
  'agentRuntime',
  'repairMode',
];

/** A check split three ways for the form (see {@link splitCheck}). */
type SplitCheck = {
  /** What the controls show and change. */
  form: Json;
  /** What "Advanced (JSON)" shows: every other field of the check (and of its `request`). */
  advanced: Json;
  /** Sent back unchanged, never shown. */
  hidden: Json;
};

/**
 * Splits a check's fields (a new check's body, or a loaded check reduced to what an update takes) into the
 * form's, the advanced section's and the hidden ones. A heartbeat monitor's `pingToken` is dropped (the
 * service keeps its own and ignores one sent back).
 */
export function splitCheck(type: CheckType, fields: Json): SplitCheck {
  const controlled = new Set(controlledFields(type));
  const hiddenNames = new Set(hiddenFields(type));
  const requestControlled = new Set(controlledRequestFields(type));
  const form: Json = {};
  const advanced: Json = {};
  const hidden: Json = {};
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (name === 'request' && controlled.has('request') && isObject(value)) {
      const shown: Json = {};
      const rest: Json = {};
      const hiddenRequest: Json = {};
      for (const [key, inner] of Object.entries(value)) {
        if (requestControlled.has(key)) shown[key] = inner;
        // A URL monitor's method can only be GET: sent back as it is, not offered.
        else if (type === 'URL' && key === 'method') hiddenRequest[key] = inner;
        else rest[key] = inner;
      }
      form.request = shown;
      if (Object.keys(hiddenRequest).length > 0) hidden.request = hiddenRequest;
      if (Object.keys(rest).length > 0) advanced.request = rest;
    } else if (name === 'heartbeat' && type === 'HEARTBEAT' && isObject(value)) {
      const { pingToken: _token, ...heartbeat } = value;
      form.heartbeat = heartbeat;
    } else if (controlled.has(name)) form[name] = value;
    else if (hiddenNames.has(name)) hidden[name] = value;
    else advanced[name] = value;
  }
  return { form, advanced, hidden };
}

/**
 * The fields of a loaded check an update takes, plus what `PUT /v1/checks/{id}` requires of every type:
 * `heartbeat` (an object) and `script` (a string or null). Not an AGENTIC check's `script`: a run may store a
 * new version while the form is open, and sending the one read back would undo it (the check's page edits
 * the script on its own).
 */
export function editableFields(check: Check): Json {
  const fields: Json = {};
  for (const name of UPDATE_FIELDS) if (check[name] !== undefined) fields[name] = check[name];
  if (!isObject(fields.heartbeat)) fields.heartbeat = {};
  if (check.checkType === 'AGENTIC') delete fields.script;
  else if (fields.script === undefined) fields.script = null;
  return fields;
}

/**
 * The body to send: the hidden fields, then the form's, then the advanced section's (merged into
 * `request` field by field, so a key there adds to the form's request instead of replacing it).
 */
export function assembleBody(split: SplitCheck): Json {
  const body: Json = { ...split.hidden, ...split.form, ...split.advanced };
  const requests = [split.hidden.request, split.form.request, split.advanced.request].filter(isObject);
  if (requests.length > 0) body.request = Object.assign({}, ...requests);
  return body;
}

/**
 * Reads the advanced section's text: an empty text is `{}`.
 * @throws Error with a message for a person when it is not JSON or not an object.
 */
export function parseAdvanced(text: string): Json {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`Not valid JSON: ${(err as Error).message}`);
  }
  if (!isObject(value)) throw new Error('Must be a JSON object ({ "field": value, … }).');
  return value;
}

/** The top-level field names (and `request.<name>`) the advanced text holds, for placing errors there. */
export function advancedPaths(text: string): string[] {
  try {
    const value = parseAdvanced(text);
    const paths = Object.keys(value);
    if (isObject(value.request)) for (const key of Object.keys(value.request)) paths.push(`request.${key}`);
    return paths;
  } catch {
    return [];
  }
}
