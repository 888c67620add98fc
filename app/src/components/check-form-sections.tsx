/**
 * The sections of the check form: what each check type asks for (its `request`, script, project or
 * heartbeat), and the parts several types share (schedule and locations, response time limits, retries,
 * alert channels, runtime). Each section is a fieldset with a heading-like legend; every control is bound to
 * its field's path so the API's errors land next to it.
 */
import { useState } from 'preact/hooks';
import { TextField } from './forms.js';
import {
  API_BODY_TYPES,
  API_METHODS,
  DNS_PROTOCOLS,
  DNS_RECORD_TYPES,
  IP_FAMILIES,
  LOCATIONS,
  RETRY_STRATEGY_TYPES,
} from '../../../src/protocol/enums.js';
import {
  AssertionRows,
  Checkbox,
  CheckboxGroup,
  FileRows,
  type FormApi,
  KeyValueRows,
  NumberInput,
  type Option,
  SelectInput,
  TextArea,
  TextInput,
  VariableRows,
} from './check-form-controls.js';
import {
  RESPONSE_TIME_DEFAULTS,
  SUB_MINUTE_OFFSETS,
  assertionSourcesOf,
  frequenciesOf,
  frequencyLabel,
  isObject,
  offsetFits,
  timeoutLimitOf,
} from './check-form-model.js';

/** Reference data the form offers choices from; a list that could not be loaded is undefined. */
export type References = {
  groups?: { id: number; name: string }[];
  privateLocations?: { id: string; name: string; slugName: string }[];
  runtimes?: { name: string; stage: string; multiStepSupport: boolean; runtimeEndOfLife: string }[];
  alertChannels?: { id: number; type: string; config: Record<string, unknown> }[];
  snippets?: { id: number; name: string }[];
};

/** Where the data centers of the public locations are, to tell them apart. */
const LOCATION_NAMES: Record<string, string> = {
  'us-east-1': 'N. Virginia',
  'us-east-2': 'Ohio',
  'us-west-1': 'N. California',
  'us-west-2': 'Oregon',
  'ca-central-1': 'Canada',
  'sa-east-1': 'São Paulo',
  'eu-west-1': 'Ireland',
  'eu-central-1': 'Frankfurt',
  'eu-west-2': 'London',
  'eu-west-3': 'Paris',
  'eu-north-1': 'Stockholm',
  'eu-south-1': 'Milan',
  'me-south-1': 'Bahrain',
  'ap-southeast-1': 'Singapore',
  'ap-northeast-1': 'Tokyo',
  'ap-east-1': 'Hong Kong',
  'ap-southeast-2': 'Sydney',
  'ap-southeast-3': 'Jakarta',
  'ap-northeast-2': 'Seoul',
  'ap-northeast-3': 'Osaka',
  'ap-south-1': 'Mumbai',
  'af-south-1': 'Cape Town',
};

const options = (values: readonly string[]): Option[] => values.map((v) => ({ value: v, label: v }));

/** Parses a select's value as an integer id, '' as null. */
const idOrNull = (value: string): number | null => (value === '' ? null : Number(value));

/** The check's name, description and switches. */
export function GeneralSection({
  fx,
  tagsText,
  onTags,
}: {
  fx: FormApi;
  tagsText: string;
  onTags: (t: string) => void;
}) {
  const scheduled = fx.type !== 'HEARTBEAT';
  return (
    <fieldset>
      <legend>General</legend>
      <TextInput fx={fx} path="name" label="Name" required />
      <TextArea
        fx={fx}
        path="description"
        label="Description"
        hint="Optional, at most 500 characters."
        rows={2}
        nullable
      />
      <TagsInput fx={fx} text={tagsText} onText={onTags} />
      <div class="check-row">
        <Checkbox
          fx={fx}
          path="activated"
          label="Activated"
          hint={
            scheduled
              ? 'Off: the check is not scheduled (it can still be run by hand).'
              : 'Off: late pings raise no alert.'
          }
        />
        <Checkbox fx={fx} path="muted" label="Muted" hint="No notifications are sent for it." />
        {scheduled ? (
          <Checkbox
            fx={fx}
            path="shouldFail"
            label="Should fail"
            hint="A failing run passes and a passing one fails (e.g. a port that must stay closed)."
          />
        ) : null}
      </div>
    </fieldset>
  );
}

/** Tags as one comma-separated input; the form turns the text into `tags` when it is sent. */
function TagsInput({ fx, text, onText }: { fx: FormApi; text: string; onText: (t: string) => void }) {
  const error = fx.error('tags');
  return (
    <TextField
      label="Tags"
      error={error}
      hint={
        <>
          Comma-separated, e.g. <code>production, api</code>: for filtering and for running checks by tag.
        </>
      }
      value={text}
      autoComplete="off"
      onValue={onText}
    />
  );
}

/** How often the check runs and where: frequency, public and private locations, parallel runs, group. */
export function ScheduleSection({ fx, refs }: { fx: FormApi; refs: References }) {
  const frequency = Number(fx.get('frequency') ?? 10);
  const offset = fx.get('frequencyOffset') as number | null | undefined;
  const frequencyOptions: Option[] = frequenciesOf(fx.type).flatMap((f) =>
    f === 0
      ? SUB_MINUTE_OFFSETS.map((s) => ({ value: `0:${s}`, label: frequencyLabel(0, s) }))
      : [{ value: String(f), label: frequencyLabel(f) }],
  );
  return (
    <fieldset>
      <legend>Schedule and locations</legend>
      <SelectInput
        fx={fx}
        path="frequency"
        aliases={['frequencyOffset']}
        label="Frequency"
        hint={
          frequenciesOf(fx.type).includes(0)
            ? 'How often it runs; every 10, 20 or 30 seconds is the sub-minute schedule.'
            : 'How often it runs.'
        }
        options={frequencyOptions}
        format={(value) => (Number(value) === 0 ? `0:${offset ?? 10}` : String(value ?? 10))}
        onChoose={(value) => {
          if (value.startsWith('0:')) {
            fx.set('frequency', 0);
            fx.set('frequencyOffset', Number(value.slice(2)));
            return;
          }
          const minutes = Number(value);
          fx.set('frequency', minutes);
          // The sub-minute schedule's offset means nothing at minutes; an offset that no longer fits goes.
          if (offset != null && (frequency === 0 || !offsetFits(minutes, offset)))
            fx.set('frequencyOffset', null);
        }}
      />
      <CheckboxGroup
        fx={fx}
        path="locations"
        legend="Public locations"
        hint="Each is a job queue any agent of your account can serve. With no location chosen at all, the check runs in us-east-1."
        options={LOCATIONS.map((l) => ({ value: l, label: `${l} (${LOCATION_NAMES[l] ?? l})` }))}
      />
      {refs.privateLocations ? (
        <CheckboxGroup
          fx={fx}
          path="privateLocations"
          legend="Private locations"
          hint="Served by the agents you run on your own network."
          options={refs.privateLocations.map((p) => ({
            value: p.slugName,
            label: `${p.name} (${p.slugName})`,
          }))}
          empty={
            <>
              None yet: <a href="/private-locations">create a private location</a>.
            </>
          }
        />
      ) : (
        <p class="notice">Private locations could not be loaded; the check keeps the ones it has.</p>
      )}
      <Checkbox
        fx={fx}
        path="runParallel"
        label="Run in parallel"
        hint="Every run goes to all its locations at once, instead of one location per run in turn."
      />
      <GroupSelect fx={fx} refs={refs} />
    </fieldset>
  );
}

/** The check group (`groupId`). */
export function GroupSelect({ fx, refs }: { fx: FormApi; refs: References }) {
  if (!refs.groups) return <p class="notice">Check groups could not be loaded; the check keeps its group.</p>;
  return (
    <SelectInput
      fx={fx}
      path="groupId"
      label="Group"
      hint="A group lends its checks defaults (locations, variables, alert settings) and runs them together."
      options={[
        { value: '', label: 'No group' },
        ...refs.groups.map((g) => ({ value: String(g.id), label: g.name })),
      ]}
      parse={idOrNull}
    />
  );
}

/** `degradedResponseTime` and `maxResponseTime`, ms; empty turns a limit off. */
export function ResponseTimeSection({ fx }: { fx: FormApi }) {
  const limits = RESPONSE_TIME_DEFAULTS[fx.type];
  if (!limits) return null;
  const judged = fx.type === 'ICMP' ? ' (judged on the average latency)' : '';
  return (
    <fieldset>
      <legend>Response time limits</legend>
      <div class="field-pair">
        <NumberInput
          fx={fx}
          path="degradedResponseTime"
          label="Degraded at (ms)"
          hint={`A run at or above it is degraded${judged}. Default ${limits.degraded}; empty: off.`}
          min={0}
          max={limits.limit}
          nullable
        />
        <NumberInput
          fx={fx}
          path="maxResponseTime"
          label="Failed at (ms)"
          hint={`A run at or above it fails. Default ${limits.max}, at most ${limits.limit}; empty: off.`}
          min={0}
          max={limits.limit}
          nullable
        />
      </div>
    </fieldset>
  );
}

/** Defaults of a retry strategy when one is first chosen (the field's usual figures). */
const RETRY_DEFAULTS = { baseBackoffSeconds: 60, maxRetries: 2, maxDurationSeconds: 600, sameRegion: true };

/** `retryStrategy`: its type, then its backoff, retries, duration, region and network-error switch. */
export function RetrySection({ fx }: { fx: FormApi }) {
  const strategy = fx.get('retryStrategy');
  const type = isObject(strategy) ? String(strategy.type) : '';
  const tunable = type !== '' && type !== 'NO_RETRIES';
  const onlyOn =
    isObject(strategy) && Array.isArray(strategy.onlyOn) && strategy.onlyOn.includes('NETWORK_ERROR');
  return (
    <fieldset>
      <legend>Retries</legend>
      <SelectInput
        fx={fx}
        path="retryStrategy.type"
        aliases={['retryStrategy']}
        label="Retry strategy"
        hint={
          fx.type === 'API'
            ? 'A failed run is run again before it counts. Not set: the deprecated doubleCheck (one retry after 5 s) applies.'
            : 'A failed run is run again before it counts.'
        }
        options={[{ value: '', label: 'Not set' }, ...options(RETRY_STRATEGY_TYPES)]}
        format={() => type}
        onChoose={(value) =>
          fx.set(
            'retryStrategy',
            value === '' ? null : { ...(isObject(strategy) ? strategy : RETRY_DEFAULTS), type: value },
          )
        }
      />
      {tunable ? (
        <>
          <div class="field-pair">
            <NumberInput
              fx={fx}
              path="retryStrategy.baseBackoffSeconds"
              label="Base backoff (seconds)"
              hint="The wait before the first retry; later ones grow from it. 0 to 600."
              min={0}
              max={600}
            />
            <NumberInput
              fx={fx}
              path="retryStrategy.maxRetries"
              label="Most retries"
              hint="0 to 10."
              min={0}
              max={10}
            />
            <NumberInput
              fx={fx}
              path="retryStrategy.maxDurationSeconds"
              label="Most duration (seconds)"
              hint="No retry starts after this long since the first attempt. 0 to 600."
              min={0}
              max={600}
            />
          </div>
          <Checkbox
            fx={fx}
            path="retryStrategy.sameRegion"
            label="Retry in the same location"
            hint="Off: the retry goes to the next location."
          />
          <div class="field field-check">
            <div class="check-line">
              <input
                id="retry-only-network"
                type="checkbox"
                checked={onlyOn}
                onChange={(e) =>
                  fx.set('retryStrategy.onlyOn', e.currentTarget.checked ? ['NETWORK_ERROR'] : undefined)
                }
              />
              <label for="retry-only-network">Only after a network error</label>
            </div>
          </div>
        </>
      ) : null}
    </fieldset>
  );
}

/** What a channel is called in the list: its type and what tells it apart. */
function channelLabel(channel: { id: number; type: string; config: Record<string, unknown> }): string {
  const c = channel.config;
  const name = [c.name, c.address, c.channel, c.serviceName, c.number].find(
    (v) => typeof v === 'string' && v !== '',
  );
  const kind = channel.type.charAt(0) + channel.type.slice(1).toLowerCase();
  return `${kind}: ${typeof name === 'string' ? name : `#${channel.id}`}`;
}

/**
 * `alertChannelSubscriptions` as one checkbox per alert channel of the account. A subscription to a channel
 * not listed (deleted since) is kept as it is.
 */
export function AlertChannelSection({
  fx,
  refs,
  creating,
}: {
  fx: FormApi;
  refs: References;
  creating: boolean;
}) {
  const channels = refs.alertChannels;
  const error = fx.error('alertChannelSubscriptions');
  if (!channels) {
    return (
      <fieldset>
        <legend>Alert channels</legend>
        <p class="notice">
          Alert channels could not be loaded;{' '}
          {creating ? 'the new check is subscribed to every channel.' : 'the check keeps its subscriptions.'}
        </p>
      </fieldset>
    );
  }
  const subscriptions =
    (fx.get('alertChannelSubscriptions') as { alertChannelId: number; activated: boolean }[]) ?? [];
  const isOn = (id: number) => subscriptions.some((s) => s.alertChannelId === id && s.activated);
  const toggle = (id: number, on: boolean) => {
    const known = subscriptions.some((s) => s.alertChannelId === id);
    fx.set(
      'alertChannelSubscriptions',
      known
        ? subscriptions.map((s) => (s.alertChannelId === id ? { ...s, activated: on } : s))
        : [...subscriptions, { alertChannelId: id, activated: on }],
    );
  };
  return (
    <fieldset aria-describedby="alert-channels-hint">
      <legend>Alert channels</legend>
      <p class="field-hint" id="alert-channels-hint">
        Where notifications about this check go. A channel can also alert for it through its group.
      </p>
      {error ? (
        <p class="field-error" role="alert">
          <span aria-hidden="true">✕ </span>
          {error}
        </p>
      ) : null}
      {channels.length === 0 ? (
        <p class="muted">
          No alert channels yet: <a href="/alert-channels">add one</a>.
        </p>
      ) : (
        <ul class="check-grid">
          {channels.map((c, i) => (
            <li key={c.id}>
              <input
                id={`alert-channel-${c.id}`}
                type="checkbox"
                checked={isOn(c.id)}
                aria-invalid={error && i === 0 ? 'true' : undefined}
                onChange={(e) => toggle(c.id, e.currentTarget.checked)}
              />
              <label for={`alert-channel-${c.id}`}>{channelLabel(c)}</label>
            </li>
          ))}
        </ul>
      )}
    </fieldset>
  );
}

/** `runtimeId`: the runtime of the check's scripts, or its group's (else the newest). */
export function RuntimeSelect({ fx, refs }: { fx: FormApi; refs: References }) {
  const runtimes = refs.runtimes ?? [];
  const multiStep = fx.type === 'MULTI_STEP';
  return (
    <SelectInput
      fx={fx}
      path="runtimeId"
      label="Runtime"
      hint={
        multiStep
          ? 'The package set the script runs with. Multi-step checks need one with multi-step support.'
          : 'The package set the scripts run with.'
      }
      options={[
        { value: '', label: "Default (the group's, else the newest)" },
        ...runtimes.map((r) => ({
          value: r.name,
          label: `${r.name} (${r.stage.toLowerCase()}${multiStep && !r.multiStepSupport ? ', no multi-step support' : ''})`,
        })),
      ]}
      parse={(value) => (value === '' ? null : value)}
    />
  );
}

const ipFamily = (fx: FormApi) => (
  <SelectInput fx={fx} path="request.ipFamily" label="IP family" options={options(IP_FAMILIES)} />
);

/** What each type's assertions judge (docs/checks.md). */
const ASSERTION_HINTS: Partial<Record<string, string>> = {
  API: 'JSON_BODY: a JSONPath in Property; HEADERS: the header name in Property, an optional regex picks part of its value; TEXT_BODY: a regex whose first group is the actual value. Target is always text, e.g. 200.',
  URL: 'The status code, e.g. LESS_THAN 400.',
  TCP: 'RESPONSE_DATA: the reply as text; RESPONSE_TIME in ms.',
  DNS: 'RESPONSE_CODE (e.g. EQUALS NXDOMAIN: without one, any code but NOERROR fails), TEXT_ANSWER (a regex), JSON_ANSWER (a JSONPath), RESPONSE_TIME in ms.',
  ICMP: 'LATENCY with Property avg, min, max or stdDev (ms); JSON_RESPONSE with a JSONPath such as $.packetLoss.',
};

function Assertions({ fx }: { fx: FormApi }) {
  return (
    <AssertionRows
      fx={fx}
      path="request.assertions"
      sources={assertionSourcesOf(fx.type)}
      hint={ASSERTION_HINTS[fx.type]}
    />
  );
}

/** An API check's request, scripts and variables. */
export function ApiSection({ fx, refs }: { fx: FormApi; refs: References }) {
  const bodyType = String(fx.get('request.bodyType') ?? 'NONE');
  const basicAuth = fx.get('request.basicAuth');
  const setAuth = (field: 'username' | 'password', value: string) => {
    const next = { username: '', password: '', ...(isObject(basicAuth) ? basicAuth : {}), [field]: value };
    fx.set('request.basicAuth', next.username === '' && next.password === '' ? null : next);
  };
  const authFx: FormApi = {
    ...fx,
    get: (path) => (isObject(basicAuth) ? basicAuth[path] : ''),
    set: (path, value) => setAuth(path as 'username' | 'password', String(value ?? '')),
    error: (path) =>
      fx.error(`request.basicAuth.${path}`, ...(path === 'username' ? ['request.basicAuth'] : [])),
  };
  const snippetOptions: Option[] = [
    { value: '', label: 'None' },
    ...(refs.snippets ?? []).map((s) => ({ value: String(s.id), label: s.name })),
  ];
  return (
    <>
      <fieldset>
        <legend>Request</legend>
        <div class="field-pair field-pair-lead">
          <SelectInput fx={fx} path="request.method" label="Method" options={options(API_METHODS)} />
          <TextInput
            fx={fx}
            path="request.url"
            label="URL"
            hint="http:// or https://, or starting with a {{VARIABLE}} such as {{GROUP_BASE_URL}}/health."
            required
            mono
            inputMode="url"
          />
        </div>
        <KeyValueRows
          fx={fx}
          path="request.queryParameters"
          noun="query parameter"
          legend="Query parameters"
        />
        <KeyValueRows
          fx={fx}
          path="request.headers"
          noun="header"
          legend="Headers"
          hint="{{VARIABLES}} are replaced. A credential header (Authorization, Cookie, …) reads ***** once saved; leaving it so keeps it."
        />
        <SelectInput
          fx={fx}
          path="request.bodyType"
          label="Body type"
          options={API_BODY_TYPES.map((t) => ({ value: t, label: t === 'NONE' ? 'NONE (no body)' : t }))}
        />
        {bodyType === 'NONE' ? null : (
          <TextArea
            fx={fx}
            path="request.body"
            label="Body"
            hint="At most 128 KiB; {{VARIABLES}} are replaced."
            rows={8}
          />
        )}
        <fieldset class="nested">
          <legend>Basic authentication</legend>
          <div class="field-pair">
            <TextInput fx={authFx} path="username" label="Username" />
            <TextInput
              fx={authFx}
              path="password"
              label="Password"
              type="password"
              autoComplete="new-password"
            />
          </div>
        </fieldset>
        <div class="check-row">
          <Checkbox fx={fx} path="request.followRedirects" label="Follow redirects" />
          <Checkbox
            fx={fx}
            path="request.skipSSL"
            label="Skip TLS certificate checks"
            hint="On: an invalid certificate does not fail the run."
          />
        </div>
        {ipFamily(fx)}
      </fieldset>
      <Assertions fx={fx} />
      <fieldset>
        <legend>Setup and teardown</legend>
        <p class="field-hint">
          The setup script may change the request; the teardown script sees the response before the
          assertions. Each runs in a sandbox for at most 10 s. Use a snippet or a script of the check's own.
        </p>
        {refs.snippets ? (
          <div class="field-pair">
            <SelectInput
              fx={fx}
              path="setupSnippetId"
              label="Setup snippet"
              options={snippetOptions}
              parse={idOrNull}
            />
            <SelectInput
              fx={fx}
              path="tearDownSnippetId"
              label="Teardown snippet"
              options={snippetOptions}
              parse={idOrNull}
            />
          </div>
        ) : (
          <p class="notice">Snippets could not be loaded; the check keeps the ones it has.</p>
        )}
        <TextArea fx={fx} path="localSetupScript" label="Setup script" rows={6} nullable />
        <TextArea fx={fx} path="localTearDownScript" label="Teardown script" rows={6} nullable />
        <RuntimeSelect fx={fx} refs={refs} />
      </fieldset>
      <VariableRows
        fx={fx}
        path="environmentVariables"
        hint="Used as {{NAME}} in the URL, headers, query parameters, body and basic auth; the check's win over its group's and the account's. A secret's value is never shown again."
      />
    </>
  );
}

/** A URL monitor's request. */
export function UrlSection({ fx }: { fx: FormApi }) {
  return (
    <>
      <fieldset>
        <legend>Request</legend>
        <TextInput
          fx={fx}
          path="request.url"
          label="URL"
          hint="http:// or https://; fetched with GET."
          required
          mono
          inputMode="url"
        />
        <div class="check-row">
          <Checkbox fx={fx} path="request.followRedirects" label="Follow redirects" />
          <Checkbox
            fx={fx}
            path="request.skipSSL"
            label="Skip TLS certificate checks"
            hint="On: an invalid certificate does not fail the run."
          />
        </div>
        {ipFamily(fx)}
      </fieldset>
      <Assertions fx={fx} />
    </>
  );
}

/** A TCP monitor's request. */
export function TcpSection({ fx }: { fx: FormApi }) {
  return (
    <>
      <fieldset>
        <legend>Connection</legend>
        <div class="field-pair field-pair-trail">
          <TextInput
            fx={fx}
            path="request.hostname"
            label="Hostname"
            hint="A name or an IP address, without scheme or port."
            required
            mono
          />
          <NumberInput fx={fx} path="request.port" label="Port" min={1} max={65535} required />
        </div>
        <TextArea
          fx={fx}
          path="request.data"
          label="Data to send"
          hint="Optional, sent after connecting; the reply is read then. At most 64 KiB."
          rows={4}
          nullable
        />
        {ipFamily(fx)}
      </fieldset>
      <Assertions fx={fx} />
    </>
  );
}

/** A DNS monitor's query. */
export function DnsSection({ fx }: { fx: FormApi }) {
  return (
    <>
      <fieldset>
        <legend>Query</legend>
        <div class="field-pair field-pair-trail">
          <TextInput
            fx={fx}
            path="request.query"
            label="Query"
            hint="The name to look up, e.g. example.com."
            required
            mono
          />
          <SelectInput
            fx={fx}
            path="request.recordType"
            label="Record type"
            options={options(DNS_RECORD_TYPES)}
          />
        </div>
        <div class="field-pair">
          <TextInput
            fx={fx}
            path="request.nameServer"
            label="Name server"
            hint="An address or host name; empty: the agent's first resolver."
            nullable
            mono
          />
          <NumberInput fx={fx} path="request.port" label="Port" hint="Default 53." min={1} max={65535} />
          <SelectInput fx={fx} path="request.protocol" label="Protocol" options={options(DNS_PROTOCOLS)} />
        </div>
      </fieldset>
      <Assertions fx={fx} />
    </>
  );
}

/** An ICMP monitor's ping and its packet loss limits. */
export function IcmpSection({ fx }: { fx: FormApi }) {
  return (
    <>
      <fieldset>
        <legend>Ping</legend>
        <div class="field-pair field-pair-trail">
          <TextInput
            fx={fx}
            path="request.hostname"
            label="Hostname"
            hint="A name or an IP address."
            required
            mono
          />
          <NumberInput
            fx={fx}
            path="request.pingCount"
            label="Ping count"
            hint="1 to 50, default 10."
            min={1}
            max={50}
          />
        </div>
        {ipFamily(fx)}
        <div class="field-pair">
          <NumberInput
            fx={fx}
            path="degradedPacketLossThreshold"
            label="Degraded at packet loss (%)"
            hint="Above 0, at most 100. Default 10."
            min={0}
            max={100}
            step="any"
            nullable
          />
          <NumberInput
            fx={fx}
            path="maxPacketLossThreshold"
            label="Failed at packet loss (%)"
            hint="At least the degraded one. Default 20."
            min={0}
            max={100}
            step="any"
            nullable
          />
        </div>
      </fieldset>
      <Assertions fx={fx} />
    </>
  );
}

/** A browser or multi-step check's script, runtime, run limit, certificate domain and variables. */
export function ScriptSection({ fx, refs }: { fx: FormApi; refs: References }) {
  const limit = timeoutLimitOf(fx.type);
  return (
    <>
      <fieldset>
        <legend>Script</legend>
        <TextArea
          fx={fx}
          path="script"
          label="Script"
          hint={
            fx.type === 'MULTI_STEP'
              ? 'A @playwright/test spec using the request fixture and test.step. At most 131 072 characters.'
              : 'A @playwright/test spec, or the body of an async function with page, context, request, browser and expect in scope. At most 131 072 characters.'
          }
          rows={18}
          required
        />
        <ScriptRunSettings fx={fx} refs={refs} limit={limit} />
      </fieldset>
      <VariableRows
        fx={fx}
        path="environmentVariables"
        hint="In process.env of the script; the check's win over its group's and the account's."
      />
    </>
  );
}

/** Runtime, `timeoutSeconds` and `sslCheckDomain`, shared by the script types. */
function ScriptRunSettings({ fx, refs, limit }: { fx: FormApi; refs: References; limit: number }) {
  return (
    <>
      {refs.runtimes ? (
        <RuntimeSelect fx={fx} refs={refs} />
      ) : (
        <p class="notice">Runtimes could not be loaded.</p>
      )}
      <div class="field-pair">
        <NumberInput
          fx={fx}
          path="timeoutSeconds"
          label="Run limit (seconds)"
          hint={`1 to ${limit}, default ${limit}.`}
          min={1}
          max={limit}
        />
        <TextInput
          fx={fx}
          path="sslCheckDomain"
          label="Certificate domain"
          hint="Optional: a domain (e.g. www.example.com) whose TLS certificate is read on each run."
          nullable
          mono
        />
      </div>
    </>
  );
}

/**
 * A Playwright check suite: the project's files, the test entry (an inline spec or a path among the files),
 * runtime, run limit, certificate domain and variables.
 */
export function PlaywrightSection({ fx, refs }: { fx: FormApi; refs: References }) {
  const script = fx.get('script');
  const inline = typeof script === 'string' && script !== '';
  const [mode, setMode] = useState<'path' | 'inline'>(inline ? 'inline' : 'path');
  const files = (fx.get('dependencies') as { path: string }[] | null | undefined) ?? [];
  const paths = files.map((f) => f.path).filter((p) => p !== '');
  const choose = (next: 'path' | 'inline') => {
    setMode(next);
    if (next === 'inline') {
      fx.set('scriptPath', null);
      if (!inline) fx.set('script', '');
    } else {
      fx.set('script', null);
      const spec = paths.find((p) => /\.(spec|test)\.[cm]?[jt]s$/.test(p)) ?? paths[0] ?? null;
      if (fx.get('scriptPath') == null) fx.set('scriptPath', spec);
    }
  };
  return (
    <>
      <fieldset>
        <legend>Project</legend>
        <FileRows
          fx={fx}
          path="dependencies"
          hint="At the root: a package.json (a JSON object), a playwright.config.ts (or .js, .mjs, .cjs), at most one lock file. At most 100 files, 128 KiB each, 5 MiB in all; paths relative, no .. segments. Only Chromium projects run, with the runtime's packages (nothing is installed on the agent)."
        />
        <fieldset class="nested" aria-describedby="playwright-entry-hint">
          <legend>Test entry</legend>
          <p class="field-hint" id="playwright-entry-hint">
            The spec to run: one of the project's files, or an inline spec.
          </p>
          <div class="check-row">
            <div class="check-line">
              <input
                id="playwright-entry-path"
                type="radio"
                name="playwright-entry"
                checked={mode === 'path'}
                onChange={() => choose('path')}
              />
              <label for="playwright-entry-path">A file of the project</label>
            </div>
            <div class="check-line">
              <input
                id="playwright-entry-inline"
                type="radio"
                name="playwright-entry"
                checked={mode === 'inline'}
                onChange={() => choose('inline')}
              />
              <label for="playwright-entry-inline">An inline spec</label>
            </div>
          </div>
          {mode === 'path' ? (
            <SelectInput
              fx={fx}
              path="scriptPath"
              label="Spec file"
              aliases={['script']}
              options={paths.map((p) => ({ value: p, label: p }))}
              parse={(value) => (value === '' ? null : value)}
            />
          ) : (
            <TextArea fx={fx} path="script" label="Inline spec" rows={14} required aliases={['scriptPath']} />
          )}
        </fieldset>
        <ScriptRunSettings fx={fx} refs={refs} limit={timeoutLimitOf(fx.type)} />
      </fieldset>
      <VariableRows
        fx={fx}
        path="environmentVariables"
        hint="In process.env of the tests; the check's win over its group's and the account's."
      />
    </>
  );
}

const UNITS = ['seconds', 'minutes', 'hours', 'days'];

/** The time zones the browser knows, for the schedule's time zone input. */
function timeZones(): string[] {
  try {
    return Intl.supportedValuesOf('timeZone');
  } catch {
    return ['UTC'];
  }
}

/**
 * A heartbeat monitor's expectation (docs/heartbeats.md): a ping every period (30 s to 365 days) or on a
 * 5-field cron schedule in a time zone, and the grace it may be late by.
 */
export function HeartbeatSection({ fx, pingUrl }: { fx: FormApi; pingUrl?: string | undefined }) {
  const heartbeat = fx.get('heartbeat');
  const hb = isObject(heartbeat) ? heartbeat : {};
  const cron = hb.schedule != null;
  const setMode = (toCron: boolean) => {
    const grace = { grace: hb.grace ?? 10, graceUnit: hb.graceUnit ?? 'minutes' };
    fx.set(
      'heartbeat',
      toCron
        ? {
            schedule: '0 * * * *',
            timezone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC',
            ...grace,
          }
        : { period: 1, periodUnit: 'hours', ...grace },
    );
  };
  const unitOptions = options(UNITS);
  return (
    <fieldset>
      <legend>Expected pings</legend>
      {pingUrl ? <PingUrl url={pingUrl} /> : null}
      <div class="check-row" role="radiogroup" aria-label="Expect pings">
        <div class="check-line">
          <input
            id="heartbeat-period"
            type="radio"
            name="heartbeat-mode"
            checked={!cron}
            onChange={() => setMode(false)}
          />
          <label for="heartbeat-period">Every period</label>
        </div>
        <div class="check-line">
          <input
            id="heartbeat-cron"
            type="radio"
            name="heartbeat-mode"
            checked={cron}
            onChange={() => setMode(true)}
          />
          <label for="heartbeat-cron">On a cron schedule</label>
        </div>
      </div>
      {cron ? (
        <div class="field-pair">
          <TextInput
            fx={fx}
            path="heartbeat.schedule"
            label="Cron schedule"
            hint="5 fields: minute hour day-of-month month day-of-week, e.g. 0 3 * * * (every day at 03:00)."
            required
            mono
          />
          <TextInput
            fx={fx}
            path="heartbeat.timezone"
            label="Time zone"
            hint="An IANA time zone, e.g. Europe/Amsterdam."
            list="heartbeat-time-zones"
          />
          <datalist id="heartbeat-time-zones">
            {timeZones().map((z) => (
              <option key={z} value={z} />
            ))}
          </datalist>
        </div>
      ) : (
        <div class="field-pair">
          <NumberInput
            fx={fx}
            path="heartbeat.period"
            label="Period"
            hint="30 seconds to 365 days."
            min={1}
            required
          />
          <SelectInput fx={fx} path="heartbeat.periodUnit" label="Period unit" options={unitOptions} />
        </div>
      )}
      <div class="field-pair">
        <NumberInput
          fx={fx}
          path="heartbeat.grace"
          label="Grace"
          hint="How late a ping may be before the monitor fails."
          aliases={['heartbeat']}
          min={0}
          required
        />
        <SelectInput fx={fx} path="heartbeat.graceUnit" label="Grace unit" options={unitOptions} />
      </div>
    </fieldset>
  );
}

/** A heartbeat monitor's ping URL, read-only, with a button that copies it. */
export function PingUrl({ url }: { url: string }) {
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  return (
    <div class="field ping-url">
      <label for="ping-url">Ping URL</label>
      <div class="ping-url-line">
        <input id="ping-url" class="mono" readOnly value={url} aria-describedby="ping-url-hint" />
        <button
          type="button"
          class="button-secondary"
          onClick={() => {
            const select = () => {
              const input = document.getElementById('ping-url') as HTMLInputElement | null;
              input?.focus();
              input?.select();
            };
            // The Clipboard API exists only in secure contexts (https, localhost); elsewhere the URL is selected.
            if (!navigator.clipboard) {
              select();
              setCopied('no');
              return;
            }
            navigator.clipboard.writeText(url).then(
              () => setCopied('yes'),
              () => {
                select();
                setCopied('no');
              },
            );
          }}
        >
          Copy
        </button>
      </div>
      <p class="field-hint" id="ping-url-hint">
        Your job sends GET, POST or HEAD to it when it runs (<code>/start</code>, <code>/fail</code> or{' '}
        <code>/&lt;exit code&gt;</code> appended for more). No API key needed.
      </p>
      <p class="copy-status" role="status" aria-live="polite">
        {copied === 'yes'
          ? 'Copied to the clipboard.'
          : copied === 'no'
            ? 'Could not copy: the URL is selected, copy it with the keyboard.'
            : ''}
      </p>
    </div>
  );
}
