import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, getAllPages } from '../api.js';
import { FormError, SelectField, TextAreaField, TextField } from '../components/forms.js';
import { ScrollRegion } from '../components/result-text.js';
import type {
  AlertChannel,
  AlertChannelType,
  AlertNotification,
  CheckGroup,
  NotificationAttempt,
} from '../components/misc-types.js';
import {
  Breadcrumbs,
  Checkbox,
  ConfirmButton,
  errorOf,
  FormButtons,
  formLevelError,
  ListStatus,
  YesNo,
} from '../components/misc-ui.js';
import { Empty, ErrorNotice, Loading, PageHeader } from '../components/page.js';
import { formatDateTime, formatMs } from '../format.js';
import { useLoad, useTitle } from '../hooks.js';
import type { Check } from '../types.js';
import './alert-channels.css';

/** Notifications per page of the log. */
const LOG_PAGE_SIZE = 20;
/** How often the notification log looks again (pending notifications move on), ms. */
const LOG_POLL_MS = 15_000;
/** The mask the API answers for a stored secret; sent back, it keeps the stored value. */
const MASK = '*****';

/** The channel types in the order the form offers them, with their names. */
const TYPES: readonly { type: AlertChannelType; label: string }[] = [
  { type: 'EMAIL', label: 'Email' },
  { type: 'SLACK', label: 'Slack' },
  { type: 'WEBHOOK', label: 'Webhook' },
  { type: 'PAGERDUTY', label: 'PagerDuty' },
  { type: 'OPSGENIE', label: 'Opsgenie' },
  { type: 'SMS', label: 'SMS' },
  { type: 'CALL', label: 'Phone call' },
];

/** The channel types as the options of the form's Type select. */
const TYPE_OPTIONS = TYPES.map((t) => ({ value: t.type, label: t.label }));

/** The name of a channel type ("Email", "Phone call"). */
function typeLabel(type: string): string {
  return TYPES.find((t) => t.type === type)?.label ?? type;
}

/** What each alert type means (docs/alerting.md, "Alerts"). */
const ALERT_TYPE_LABELS: Record<string, string> = {
  ALERT_FAILURE: 'Failing',
  ALERT_FAILURE_REMAIN: 'Still failing (reminder)',
  ALERT_FAILURE_DEGRADED: 'Failing, now degraded',
  ALERT_DEGRADED: 'Degraded',
  ALERT_DEGRADED_REMAIN: 'Still degraded (reminder)',
  ALERT_DEGRADED_FAILURE: 'Degraded, now failing',
  ALERT_RECOVERY: 'Recovered',
  ALERT_DEGRADED_RECOVERY: 'Recovered from degraded',
  ALERT_SSL: 'SSL certificate expiry',
  ALERT_TEST: 'Test notification',
};

/** A webhook header or query parameter (`locked` kept as the API answered it). */
type KeyValue = { key: string; value: string; locked?: boolean };
/** The config of a channel as the form edits it: every field of every type, as text. */
type ConfigState = Record<string, string>;

/**
 * Alert channels (`/alert-channels`) and one of them with its notification log
 * (`/alert-channels/:channelId`): where alerts go (email, Slack, webhook, PagerDuty, Opsgenie, SMS, phone
 * call), which changes each hears about, a test notification, and every delivery attempt.
 */
export default function AlertChannelsPage({ channelId }: { channelId?: string }) {
  return channelId ? <ChannelDetail id={channelId} /> : <ChannelList />;
}

/** A host name from a URL, or the text itself when it is not one. */
function hostOf(url: unknown): string {
  if (typeof url !== 'string') return '';
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** A short description of where a channel sends, from what the API answers (secrets are masked there). */
function targetOf(channel: AlertChannel): string {
  const c = channel.config as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' && v ? v : '');
  switch (channel.type) {
    case 'EMAIL':
      return text(c.address);
    case 'SLACK':
      return [text(c.channel), hostOf(c.url)].filter(Boolean).join(' on ');
    case 'WEBHOOK':
      return `${text(c.name)} (${text(c.method) || 'POST'} ${hostOf(c.url)})`;
    case 'SMS':
    case 'CALL':
      return `${text(c.name)} (${text(c.number)})`;
    case 'PAGERDUTY':
      return text(c.serviceName) || text(c.account) || 'PagerDuty service';
    case 'OPSGENIE':
      return `${text(c.name)} (${text(c.region)}, ${text(c.priority)})`;
    default:
      return '';
  }
}

/** Which changes a channel hears about, as words. */
function sendsOf(channel: AlertChannel): string {
  const parts: string[] = [];
  if (channel.sendFailure) parts.push('failures');
  if (channel.sendDegraded) parts.push('degradations');
  if (channel.sendRecovery) parts.push('recoveries');
  if (channel.sslExpiry) parts.push(`SSL expiry (${channel.sslExpiryThreshold} days before)`);
  return parts.length ? parts.join(', ') : 'nothing';
}

function ChannelList() {
  useTitle('Alert channels');
  const channels = useLoad((signal) => getAllPages<AlertChannel>('/v1/alert-channels', {}, signal), []);
  const [creating, setCreating] = useState(false);
  const { route } = useLocation();

  return (
    <>
      <PageHeader title="Alert channels">
        <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          {creating ? 'Close the form' : 'New alert channel'}
        </button>
      </PageHeader>
      <p class="muted ac-intro">
        Alerts of the checks subscribed to a channel (directly, through their check group, or because the
        channel subscribes new checks) are sent there, each exactly once, with every attempt recorded.
      </p>
      {creating ? (
        <ChannelForm
          onSaved={(channel) => route(`/alert-channels/${channel.id}`)}
          onCancel={() => setCreating(false)}
        />
      ) : null}
      <ListStatus load={channels} loading="Loading alert channels" isEmpty={channels.data?.length === 0}>
        No alert channel yet: alerts are recorded but nobody is told. Create one with{' '}
        <strong>New alert channel</strong>, then send it a test notification.
      </ListStatus>
      {channels.data && channels.data.length > 0 ? (
        <div class="table-wrap">
          <table class="misc-table">
            <caption class="visually-hidden">Alert channels</caption>
            <thead>
              <tr>
                <th scope="col">Channel</th>
                <th scope="col">Type</th>
                <th scope="col">Sends</th>
                <th scope="col" class="num">
                  Subscriptions
                </th>
                <th scope="col">New checks subscribe</th>
              </tr>
            </thead>
            <tbody>
              {channels.data.map((channel) => (
                <tr key={channel.id}>
                  <th scope="row">
                    <a href={`/alert-channels/${channel.id}`}>
                      {targetOf(channel) || `Channel ${channel.id}`}
                    </a>
                  </th>
                  <td>{typeLabel(channel.type)}</td>
                  <td>{sendsOf(channel)}</td>
                  <td class="num">{channel.subscriptions.filter((s) => s.activated).length}</td>
                  <td>
                    <YesNo value={channel.autoSubscribe} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

/** The form's config state of a channel (edit) or of a new channel of `type`. */
function initialConfig(channel: AlertChannel | undefined): {
  config: ConfigState;
  headers: KeyValue[];
  queryParameters: KeyValue[];
} {
  const c = (channel?.config ?? {}) as Record<string, unknown>;
  const config: Record<string, string> = {};
  for (const [name, value] of Object.entries(c)) {
    if (typeof value === 'string') config[name] = value;
  }
  const rows = (v: unknown): KeyValue[] =>
    Array.isArray(v) ? (v as KeyValue[]).map((r) => ({ ...r, value: String(r.value ?? '') })) : [];
  return {
    config: config as ConfigState,
    headers: rows(c.headers),
    queryParameters: rows(c.queryParameters),
  };
}

/** The `config` body of `type` from the form's state: empty optional fields left out (or null). */
function configBody(
  type: AlertChannelType,
  c: ConfigState,
  headers: KeyValue[],
  queryParameters: KeyValue[],
): Record<string, unknown> {
  const v = (name: string) => (c[name] ?? '').trim();
  const optional = (name: string) => (v(name) ? v(name) : null);
  const rows = (list: KeyValue[]) =>
    list
      .filter((r) => r.key.trim() || r.value)
      .map((r) => ({
        key: r.key.trim(),
        value: r.value,
        ...(r.locked !== undefined ? { locked: r.locked } : {}),
      }));
  switch (type) {
    case 'EMAIL':
      return { address: v('address') };
    case 'SLACK':
      return { url: v('url'), channel: optional('channel') };
    case 'WEBHOOK':
      return {
        name: v('name'),
        url: v('url'),
        method: v('method') || 'POST',
        headers: rows(headers),
        queryParameters: rows(queryParameters),
        template: c.template ? c.template : null,
        webhookSecret: optional('webhookSecret'),
        webhookType: optional('webhookType'),
      };
    case 'SMS':
    case 'CALL':
      return { name: v('name'), number: v('number') };
    case 'PAGERDUTY':
      return {
        serviceKey: v('serviceKey'),
        account: optional('account'),
        serviceName: optional('serviceName'),
      };
    case 'OPSGENIE':
      return {
        name: v('name'),
        apiKey: v('apiKey'),
        region: v('region') || 'US',
        priority: v('priority') || 'P3',
      };
  }
}

/** A text input of the config, wired to its `config.<name>` error. */
function ConfigInput({
  name,
  label,
  hint,
  type = 'text',
  required = false,
  config,
  error,
  onChange,
  autoComplete,
}: {
  name: string;
  label: string;
  hint?: string | undefined;
  type?: 'text' | 'email' | 'url' | 'tel' | 'password';
  required?: boolean;
  config: ConfigState;
  error: unknown;
  onChange: (name: string, value: string) => void;
  autoComplete?: string;
}) {
  return (
    <TextField
      label={required ? label : `${label} (optional)`}
      hint={hint}
      error={errorOf(error, `config.${name}`)}
      type={type}
      required={required}
      value={config[name] ?? ''}
      spellcheck={false}
      autoComplete={autoComplete ?? 'off'}
      onValue={(value) => onChange(name, value)}
    />
  );
}

/** A config select of fixed choices. */
function ConfigSelect({
  name,
  label,
  choices,
  fallback,
  config,
  error,
  onChange,
}: {
  name: string;
  label: string;
  choices: readonly { value: string; label: string }[];
  fallback: string;
  config: ConfigState;
  error: unknown;
  onChange: (name: string, value: string) => void;
}) {
  return (
    <SelectField
      label={label}
      error={errorOf(error, `config.${name}`)}
      value={config[name] || fallback}
      onValue={(value) => onChange(name, value)}
      options={choices}
    />
  );
}

/** Rows of key and value (webhook headers or query parameters), each removable, and a button to add one. */
function KeyValueRows({
  legend,
  name,
  rows,
  onChange,
  error,
}: {
  legend: string;
  name: string;
  rows: KeyValue[];
  onChange: (rows: KeyValue[]) => void;
  error: unknown;
}) {
  const message = errorOf(error, `config.${name}`);
  const set = (i: number, patch: Partial<KeyValue>) =>
    onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const singular = name === 'headers' ? 'header' : 'query parameter';
  return (
    <fieldset class="ac-rows">
      <legend>{legend}</legend>
      {rows.length === 0 ? <p class="muted ac-rows-empty">None.</p> : null}
      {rows.map((row, i) => (
        <div class="ac-row" key={i}>
          <label>
            <span class="visually-hidden">
              Name of {singular} {i + 1}
            </span>
            <input
              type="text"
              placeholder="Name"
              value={row.key}
              spellcheck={false}
              onInput={(e) => set(i, { key: e.currentTarget.value })}
            />
          </label>
          <label>
            <span class="visually-hidden">
              Value of {singular} {i + 1}
            </span>
            <input
              type="text"
              placeholder="Value"
              value={row.value}
              spellcheck={false}
              onInput={(e) => set(i, { value: e.currentTarget.value })}
            />
          </label>
          <button
            type="button"
            class="button-secondary misc-small"
            onClick={() => onChange(rows.filter((_, j) => j !== i))}
          >
            Remove
            <span class="visually-hidden">
              {' '}
              {singular} {i + 1}
            </span>
          </button>
        </div>
      ))}
      {message ? (
        <p class="field-error" role="alert">
          <span aria-hidden="true">✕ </span>
          {message}
        </p>
      ) : null}
      <button
        type="button"
        class="button-secondary misc-small"
        onClick={() => onChange([...rows, { key: '', value: '' }])}
      >
        Add {singular}
      </button>
    </fieldset>
  );
}

/** The config fields of a channel type. */
function ConfigFields({
  type,
  config,
  headers,
  queryParameters,
  editing,
  error,
  onConfig,
  onHeaders,
  onQueryParameters,
}: {
  type: AlertChannelType;
  config: ConfigState;
  headers: KeyValue[];
  queryParameters: KeyValue[];
  editing: boolean;
  error: unknown;
  onConfig: (name: string, value: string) => void;
  onHeaders: (rows: KeyValue[]) => void;
  onQueryParameters: (rows: KeyValue[]) => void;
}) {
  const common = { config, error, onChange: onConfig };
  const secretHint = editing ? `The stored secret reads ${MASK}: leave it to keep it.` : undefined;
  switch (type) {
    case 'EMAIL':
      return (
        <ConfigInput
          {...common}
          name="address"
          label="Email address"
          type="email"
          required
          autoComplete="email"
        />
      );
    case 'SLACK':
      return (
        <>
          <ConfigInput
            {...common}
            name="url"
            label="Incoming webhook URL"
            type="url"
            required
            hint="The https:// URL Slack gave the incoming webhook."
          />
          <ConfigInput {...common} name="channel" label="Channel" hint="Shown in the message, e.g. #ops." />
        </>
      );
    case 'WEBHOOK':
      return (
        <>
          <ConfigInput {...common} name="name" label="Name" required />
          <ConfigInput {...common} name="url" label="URL" type="url" required hint="http:// or https://" />
          <ConfigSelect
            {...common}
            name="method"
            label="Method"
            fallback="POST"
            choices={['POST', 'PUT', 'PATCH', 'GET', 'HEAD', 'DELETE'].map((m) => ({ value: m, label: m }))}
          />
          <KeyValueRows legend="Headers" name="headers" rows={headers} onChange={onHeaders} error={error} />
          <KeyValueRows
            legend="Query parameters"
            name="queryParameters"
            rows={queryParameters}
            onChange={onQueryParameters}
            error={error}
          />
          <TextAreaField
            label="Body template (optional)"
            hint="Handlebars template of the body, e.g. {{ALERT_TITLE}}; empty: the default JSON body (docs/alerting.md)."
            error={errorOf(error, 'config.template')}
            value={config.template ?? ''}
            spellcheck={false}
            onValue={(value) => onConfig('template', value)}
          />
          <ConfigInput
            {...common}
            name="webhookSecret"
            label="Signing secret"
            type="password"
            autoComplete="new-password"
            hint={secretHint ?? 'Signs every request (webhook-signature) so the receiver can verify it.'}
          />
          <ConfigInput
            {...common}
            name="webhookType"
            label="Webhook type"
            hint="Capital letters, digits and underscores, e.g. WEBHOOK_MSTEAMS."
          />
        </>
      );
    case 'SMS':
    case 'CALL':
      return (
        <>
          <ConfigInput {...common} name="name" label="Name" required />
          <ConfigInput
            {...common}
            name="number"
            label="Phone number"
            type="tel"
            required
            autoComplete="tel"
            hint="International format (E.164): a plus sign and the digits, e.g. +4915112345678."
          />
        </>
      );
    case 'PAGERDUTY':
      return (
        <>
          <ConfigInput
            {...common}
            name="serviceKey"
            label="Integration key"
            type="password"
            required
            autoComplete="new-password"
            hint={secretHint ?? 'The Events API v2 integration key of the PagerDuty service.'}
          />
          <ConfigInput {...common} name="account" label="Account" />
          <ConfigInput {...common} name="serviceName" label="Service name" />
        </>
      );
    case 'OPSGENIE':
      return (
        <>
          <ConfigInput {...common} name="name" label="Name" required />
          <ConfigInput
            {...common}
            name="apiKey"
            label="API key"
            type="password"
            required
            autoComplete="new-password"
            hint={secretHint ?? 'The API key of an Opsgenie API integration.'}
          />
          <ConfigSelect
            {...common}
            name="region"
            label="Region"
            fallback="US"
            choices={[
              { value: 'US', label: 'US' },
              { value: 'EU', label: 'EU' },
            ]}
          />
          <ConfigSelect
            {...common}
            name="priority"
            label="Priority"
            fallback="P3"
            choices={['P1', 'P2', 'P3', 'P4', 'P5'].map((p) => ({ value: p, label: p }))}
          />
        </>
      );
  }
}

/**
 * Create (no `channel`) or edit an alert channel: its type, the config the type needs, and the flags (which
 * changes it hears about, SSL expiry and its threshold, whether new checks subscribe to it).
 */
function ChannelForm({
  channel,
  onSaved,
  onCancel,
}: {
  channel?: AlertChannel;
  onSaved: (channel: AlertChannel) => void;
  onCancel: () => void;
}) {
  const editing = channel !== undefined;
  const initial = initialConfig(channel);
  const [type, setType] = useState<AlertChannelType>(channel?.type ?? 'EMAIL');
  const [config, setConfig] = useState<ConfigState>(initial.config);
  const [headers, setHeaders] = useState<KeyValue[]>(initial.headers);
  const [queryParameters, setQueryParameters] = useState<KeyValue[]>(initial.queryParameters);
  const [sendFailure, setSendFailure] = useState(channel?.sendFailure ?? true);
  const [sendDegraded, setSendDegraded] = useState(channel?.sendDegraded ?? false);
  const [sendRecovery, setSendRecovery] = useState(channel?.sendRecovery ?? true);
  const [sslExpiry, setSslExpiry] = useState(channel?.sslExpiry ?? false);
  const [threshold, setThreshold] = useState(String(channel?.sslExpiryThreshold ?? 30));
  const [autoSubscribe, setAutoSubscribe] = useState(channel?.autoSubscribe ?? false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const body = {
      type,
      config: configBody(type, config, headers, queryParameters),
      sendFailure,
      sendDegraded,
      sendRecovery,
      sslExpiry,
      sslExpiryThreshold: Number(threshold),
      autoSubscribe,
    };
    try {
      const saved = channel
        ? await api.put<AlertChannel>(`/v1/alert-channels/${channel.id}`, body)
        : await api.post<AlertChannel>('/v1/alert-channels', body);
      onSaved(saved);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const headingId = editing ? 'ac-edit' : 'ac-new';
  return (
    <form class="card misc-form" onSubmit={submit} noValidate aria-labelledby={headingId}>
      <h2 id={headingId}>{editing ? 'Edit the channel' : 'New alert channel'}</h2>
      <SelectField
        label="Type"
        error={errorOf(error, 'type')}
        hint={editing ? 'Changing the type needs the new type’s settings.' : undefined}
        value={type}
        onValue={setType}
        options={TYPE_OPTIONS}
      />
      <fieldset>
        <legend>{typeLabel(type)} settings</legend>
        <ConfigFields
          type={type}
          config={config}
          headers={headers}
          queryParameters={queryParameters}
          editing={channel !== undefined && channel.type === type}
          error={error}
          onConfig={(name, value) => setConfig({ ...config, [name]: value } as ConfigState)}
          onHeaders={setHeaders}
          onQueryParameters={setQueryParameters}
        />
      </fieldset>
      <fieldset>
        <legend>What it is told about</legend>
        <Checkbox label="Failures" checked={sendFailure} onChange={setSendFailure} />
        <Checkbox label="Degradations" checked={sendDegraded} onChange={setSendDegraded} />
        <Checkbox
          label="Recoveries"
          checked={sendRecovery}
          onChange={setSendRecovery}
          hint="Only for episodes whose failure (or degradation) this channel was told about."
        />
        <Checkbox label="SSL certificates about to expire" checked={sslExpiry} onChange={setSslExpiry} />
        {sslExpiry ? (
          <TextField
            label="Days before expiry"
            hint="1 to 30 days."
            error={errorOf(error, 'sslExpiryThreshold')}
            type="number"
            min={1}
            max={30}
            class="misc-narrow"
            value={threshold}
            onValue={setThreshold}
          />
        ) : null}
      </fieldset>
      <Checkbox
        label="Subscribe new checks to this channel"
        checked={autoSubscribe}
        onChange={setAutoSubscribe}
        hint="Checks created later alert here without being subscribed one by one."
      />
      <FormError error={formLevelError(error, ['type', 'config', 'sslExpiryThreshold'])} />
      <FormButtons label={editing ? 'Save' : 'Create alert channel'} busy={busy} onCancel={onCancel} />
    </form>
  );
}

/** A notification's state as a badge (text and glyph, the colour only repeats it). */
function StateBadge({ state }: { state: AlertNotification['state'] }) {
  const map = {
    DELIVERED: { cls: 'passing', glyph: '✓', label: 'Delivered' },
    PENDING: { cls: 'pending', glyph: '…', label: 'Pending' },
    SENDING: { cls: 'pending', glyph: '↻', label: 'Sending' },
    FAILED: { cls: 'failing', glyph: '✕', label: 'Failed' },
  } as const;
  const { cls, glyph, label } = map[state];
  return (
    <span class={`badge badge-${cls}`}>
      <span aria-hidden="true" class="badge-glyph">
        {glyph}
      </span>
      {label}
    </span>
  );
}

/** An attempt's outcome as a badge. */
function OutcomeBadge({ outcome }: { outcome: NotificationAttempt['outcome'] }) {
  const map = {
    DELIVERED: { cls: 'passing', glyph: '✓', label: 'Delivered' },
    RETRY: { cls: 'degraded', glyph: '↻', label: 'Will retry' },
    FAILED: { cls: 'failing', glyph: '✕', label: 'Failed' },
  } as const;
  const { cls, glyph, label } = map[outcome];
  return (
    <span class={`badge badge-${cls}`}>
      <span aria-hidden="true" class="badge-glyph">
        {glyph}
      </span>
      {label}
    </span>
  );
}

/**
 * The attempts of a notification, oldest first: time, outcome, status (the short status text, `HTTP 404 Not
 * Found`, or the code), latency and error. The body of a provider's answer is never kept, so none is shown.
 */
function AttemptsTable({ attempts, caption }: { attempts: NotificationAttempt[]; caption: string }) {
  return (
    // Named and focusable while it scrolls sideways (a narrow screen): the keyboard can reach what it hides.
    <ScrollRegion label={caption}>
      <table class="misc-table ac-attempts">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">Outcome</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Latency
            </th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {attempts.map((a, i) => (
            <tr key={i}>
              <th scope="row">
                <time dateTime={a.startedAt}>{formatDateTime(a.startedAt)}</time>
              </th>
              <td>
                <OutcomeBadge outcome={a.outcome} />
              </td>
              <td>{a.answer ?? a.statusCode ?? <span class="muted">no answer</span>}</td>
              <td class="num">{formatMs(a.latencyMs)}</td>
              <td>{a.error ? <p class="ac-excerpt ac-error">{a.error}</p> : <span class="muted">—</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

/** The words of each config field (docs/api.md, "Alert channel"). */
const CONFIG_LABELS: Record<string, string> = {
  address: 'Email address',
  url: 'URL',
  channel: 'Channel',
  name: 'Name',
  method: 'Method',
  headers: 'Headers',
  queryParameters: 'Query parameters',
  template: 'Body template',
  webhookSecret: 'Signing secret',
  webhookType: 'Webhook type',
  number: 'Phone number',
  serviceKey: 'Integration key',
  account: 'Account',
  serviceName: 'Service name',
  apiKey: 'API key',
  region: 'Region',
  priority: 'Priority',
};

/** What the configuration of a channel says, as the API answers it (secrets read `*****`). */
function ConfigList({ channel }: { channel: AlertChannel }) {
  const entries = Object.entries(channel.config as Record<string, unknown>);
  const show = (value: unknown) => {
    if (value === null || value === undefined || value === '') return <span class="muted">—</span>;
    if (Array.isArray(value)) {
      if (value.length === 0) return <span class="muted">none</span>;
      return (
        <ul class="ac-plain-list">
          {(value as KeyValue[]).map((r) => (
            <li key={r.key}>
              <code>
                {r.key}: {r.value}
              </code>
            </li>
          ))}
        </ul>
      );
    }
    if (typeof value === 'string' && value.includes('\n')) return <pre>{value}</pre>;
    return <span>{String(value)}</span>;
  };
  return (
    <dl class="misc-dl">
      {entries.map(([name, value]) => (
        <Fragment key={name}>
          <dt>{CONFIG_LABELS[name] ?? name}</dt>
          <dd>{show(value)}</dd>
        </Fragment>
      ))}
    </dl>
  );
}

function ChannelDetail({ id }: { id: string }) {
  const { route } = useLocation();
  const path = `/v1/alert-channels/${encodeURIComponent(id)}`;
  const channel = useLoad((signal) => api.get<AlertChannel>(path, undefined, signal), [id]);
  const [editing, setEditing] = useState(false);
  const [testing, setTesting] = useState(false);
  const [test, setTest] = useState<AlertNotification | null>(null);
  const [testError, setTestError] = useState<unknown>(null);
  const [logVersion, setLogVersion] = useState(0);
  const data = channel.data;
  const title = data ? targetOf(data) || `${typeLabel(data.type)} channel` : 'Alert channel';
  useTitle(data ? `${title} · Alert channels` : 'Alert channel');

  if (channel.error && !data) {
    return (
      <>
        <Breadcrumbs items={[{ href: '/alert-channels', label: 'Alert channels' }, { label: id }]} />
        <PageHeader title="Alert channel" />
        <ErrorNotice error={channel.error} />
      </>
    );
  }
  if (!data) return <Loading what="Loading the alert channel" />;

  async function sendTest() {
    setTesting(true);
    setTestError(null);
    setTest(null);
    try {
      setTest(await api.post<AlertNotification>(`${path}/test`, undefined, { maxWaitSeconds: 10 }));
      setLogVersion((v) => v + 1);
    } catch (err) {
      setTestError(err);
    } finally {
      setTesting(false);
    }
  }

  const attempt = test?.attempts[test.attempts.length - 1];
  return (
    <>
      <Breadcrumbs items={[{ href: '/alert-channels', label: 'Alert channels' }, { label: title }]} />
      <PageHeader title={title}>
        <button type="button" onClick={sendTest} disabled={testing}>
          {testing ? 'Sending the test…' : 'Send test notification'}
        </button>
        <button
          type="button"
          class="button-secondary"
          aria-expanded={editing}
          onClick={() => setEditing(!editing)}
        >
          {editing ? 'Close the form' : 'Edit'}
        </button>
        <ConfirmButton
          label="Delete channel"
          question={
            <>
              Delete the alert channel <strong>{title}</strong>? Its subscriptions go with it; alerts are no
              longer sent there.
            </>
          }
          confirmLabel="Delete channel"
          onConfirm={async () => {
            await api.delete(path);
            route('/alert-channels');
          }}
        />
      </PageHeader>

      <div aria-live="polite">
        {testing ? <p class="muted">Waiting up to 10 seconds for the first delivery attempt…</p> : null}
        {test && attempt ? (
          <div
            class={`notice ${attempt.outcome === 'DELIVERED' ? 'notice-ok' : 'notice-error'}`}
            role={attempt.outcome === 'DELIVERED' ? 'status' : 'alert'}
          >
            <strong>
              {attempt.outcome === 'DELIVERED'
                ? 'The test notification was delivered.'
                : attempt.outcome === 'RETRY'
                  ? 'The test notification was not delivered yet: it will be tried again.'
                  : 'The test notification could not be delivered.'}
            </strong>
            <AttemptsTable attempts={[attempt]} caption="The test notification's first attempt" />
          </div>
        ) : null}
        {test && !attempt ? (
          <div class="notice" role="status">
            <strong>No attempt finished within 10 seconds.</strong>
            <p>The test notification is queued; its attempts show in the notification log below.</p>
          </div>
        ) : null}
      </div>
      <FormError error={testError} />

      {editing ? (
        <ChannelForm
          channel={data}
          onSaved={() => {
            setEditing(false);
            channel.reload();
          }}
          onCancel={() => setEditing(false)}
        />
      ) : null}

      <div class="grid ac-summary">
        <section class="card" aria-labelledby="ac-settings">
          <h2 id="ac-settings">{typeLabel(data.type)} settings</h2>
          <ConfigList channel={data} />
        </section>
        <section class="card" aria-labelledby="ac-flags">
          <h2 id="ac-flags">What it is told about</h2>
          <dl class="misc-dl">
            <dt>Failures</dt>
            <dd>
              <YesNo value={data.sendFailure} />
            </dd>
            <dt>Degradations</dt>
            <dd>
              <YesNo value={data.sendDegraded} />
            </dd>
            <dt>Recoveries</dt>
            <dd>
              <YesNo value={data.sendRecovery} />
            </dd>
            <dt>SSL expiry</dt>
            <dd>{data.sslExpiry ? `${data.sslExpiryThreshold} days before` : <YesNo value={false} />}</dd>
            <dt>New checks subscribe</dt>
            <dd>
              <YesNo value={data.autoSubscribe} />
            </dd>
          </dl>
        </section>
      </div>

      <Subscriptions channel={data} path={path} onSaved={channel.reload} />
      <NotificationLog channelId={data.id} version={logVersion} />
    </>
  );
}

/** The checks and check groups subscribed to a channel, editable as one list of checkboxes. */
function Subscriptions({
  channel,
  path,
  onSaved,
}: {
  channel: AlertChannel;
  path: string;
  onSaved: () => void;
}) {
  const targets = useLoad(async (signal) => {
    const [checks, groups] = await Promise.all([
      api.get<Check[]>('/v1/checks', undefined, signal),
      getAllPages<CheckGroup>('/v1/check-groups', {}, signal),
    ]);
    return { checks, groups };
  }, []);
  const [editing, setEditing] = useState(false);
  const [checked, setChecked] = useState<Set<string>>(new Set());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const keyOf = (s: { checkId?: string; groupId?: number }) =>
    s.checkId !== undefined ? `c:${s.checkId}` : `g:${s.groupId}`;
  const active = channel.subscriptions.filter((s) => s.activated);
  const checkName = new Map((targets.data?.checks ?? []).map((c) => [c.id, c.name]));
  const groupName = new Map((targets.data?.groups ?? []).map((g) => [g.id, g.name]));

  function startEditing() {
    setChecked(new Set(active.map(keyOf)));
    setError(null);
    setEditing(true);
  }

  async function save(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    // Checked: subscribed and activated. A deactivated subscription left unchecked stays as it was.
    const kept = channel.subscriptions.filter((s) => !s.activated && !checked.has(keyOf(s)));
    const subscriptions = [
      ...[...checked].map((k) =>
        k.startsWith('c:')
          ? { checkId: k.slice(2), activated: true }
          : { groupId: Number(k.slice(2)), activated: true },
      ),
      ...kept,
    ];
    try {
      await api.put(path, { subscriptions });
      setEditing(false);
      onSaved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const toggle = (k: string, on: boolean) => {
    const next = new Set(checked);
    if (on) next.add(k);
    else next.delete(k);
    setChecked(next);
  };

  return (
    <section aria-labelledby="ac-subs">
      <div class="misc-section-head">
        <h2 id="ac-subs">Subscriptions</h2>
        {!editing ? (
          <button type="button" class="button-secondary" onClick={startEditing} disabled={!targets.data}>
            Change subscriptions
          </button>
        ) : null}
      </div>
      {targets.error ? <ErrorNotice error={targets.error} /> : null}
      {!editing ? (
        <>
          {active.length === 0 ? (
            <Empty>
              No check or check group is subscribed{channel.autoSubscribe ? ' yet (new checks will be)' : ''}.
              Use <strong>Change subscriptions</strong> to pick the checks and groups that alert here.
            </Empty>
          ) : null}
          {channel.subscriptions.length > 0 ? (
            <ul class="ac-plain-list">
              {channel.subscriptions.map((s) => (
                <li key={keyOf(s)}>
                  {s.checkId !== undefined ? (
                    <>
                      Check{' '}
                      <a href={`/checks/${encodeURIComponent(s.checkId)}`}>
                        {checkName.get(s.checkId) ?? s.checkId}
                      </a>
                    </>
                  ) : (
                    <>
                      Check group{' '}
                      <a href={`/check-groups/${s.groupId}`}>
                        {groupName.get(s.groupId ?? 0) ?? `#${s.groupId}`}
                      </a>{' '}
                      (all its checks)
                    </>
                  )}
                  {s.activated ? null : <span class="muted"> (deactivated: it alerts nobody here)</span>}
                </li>
              ))}
            </ul>
          ) : null}
        </>
      ) : (
        <form class="card misc-form" onSubmit={save} noValidate aria-labelledby="ac-subs-edit">
          <h3 id="ac-subs-edit">Checks and groups that alert here</h3>
          <fieldset class="ac-pick">
            <legend>Check groups</legend>
            {(targets.data?.groups ?? []).length === 0 ? <p class="muted">No check group.</p> : null}
            {(targets.data?.groups ?? []).map((g) => (
              <Checkbox
                key={g.id}
                label={g.name}
                checked={checked.has(`g:${g.id}`)}
                onChange={(on) => toggle(`g:${g.id}`, on)}
              />
            ))}
          </fieldset>
          <fieldset class="ac-pick">
            <legend>Checks</legend>
            {(targets.data?.checks ?? []).length === 0 ? <p class="muted">No check.</p> : null}
            {(targets.data?.checks ?? []).map((c) => (
              <Checkbox
                key={c.id}
                label={`${c.name} (${c.checkType})`}
                checked={checked.has(`c:${c.id}`)}
                onChange={(on) => toggle(`c:${c.id}`, on)}
              />
            ))}
          </fieldset>
          <FormError error={error} />
          <FormButtons label="Save subscriptions" busy={busy} onCancel={() => setEditing(false)} />
        </form>
      )}
    </section>
  );
}

/**
 * The notification log of a channel, newest first, a page at a time, optionally of one state: each
 * notification's state, alert type, check and creation, and every attempt in a disclosure.
 */
function NotificationLog({ channelId, version }: { channelId: number; version: number }) {
  const [page, setPage] = useState(1);
  const [state, setState] = useState('');
  const log = useLoad(
    (signal) =>
      api.get<AlertNotification[]>(
        '/v1/alert-notifications',
        { alertChannelId: channelId, limit: LOG_PAGE_SIZE, page, ...(state ? { state } : {}) },
        signal,
      ),
    [channelId, page, state, version],
    LOG_POLL_MS,
  );
  const checks = useLoad((signal) => api.get<Check[]>('/v1/checks', undefined, signal), []);
  const checkName = new Map((checks.data ?? []).map((c) => [c.id, c.name]));
  const list = log.data;
  const more = list !== undefined && list.length === LOG_PAGE_SIZE;

  return (
    <section aria-labelledby="ac-log">
      <div class="misc-section-head">
        <h2 id="ac-log">Notification log</h2>
        <div class="ac-filter">
          <label for="ac-state">State</label>
          <select
            id="ac-state"
            value={state}
            onChange={(e) => {
              setState(e.currentTarget.value);
              setPage(1);
            }}
          >
            <option value="">Every state</option>
            <option value="DELIVERED">Delivered</option>
            <option value="PENDING">Pending</option>
            <option value="SENDING">Sending</option>
            <option value="FAILED">Failed</option>
          </select>
        </div>
      </div>
      {log.error ? <ErrorNotice error={log.error} /> : null}
      {!list && !log.error ? <Loading what="Loading notifications" /> : null}
      {list && list.length === 0 ? (
        <Empty>
          {page > 1
            ? 'No more notifications.'
            : state
              ? 'No notification in this state.'
              : 'Nothing was sent through this channel yet. Use Send test notification to try it.'}
        </Empty>
      ) : null}
      {list && list.length > 0 ? (
        <div class="table-wrap">
          <table class="misc-table">
            <caption class="visually-hidden">Notifications sent through the channel, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Alert</th>
                <th scope="col">Check</th>
                <th scope="col">State</th>
                <th scope="col">Attempts</th>
              </tr>
            </thead>
            <tbody>
              {list.map((n) => (
                <tr key={n.id}>
                  <th scope="row">
                    <time dateTime={n.createdAt}>{formatDateTime(n.createdAt)}</time>
                  </th>
                  <td>
                    {ALERT_TYPE_LABELS[n.alertType] ?? n.alertType}
                    <br />
                    <code class="muted ac-code">{n.alertType}</code>
                  </td>
                  <td>
                    {n.checkId ? (
                      <a href={`/checks/${encodeURIComponent(n.checkId)}`}>
                        {checkName.get(n.checkId) ?? n.checkId}
                      </a>
                    ) : (
                      <span class="muted">none (a test)</span>
                    )}
                  </td>
                  <td>
                    <StateBadge state={n.state} />
                    {n.state === 'PENDING' && n.nextAttemptAt ? (
                      <div class="muted ac-small">next try {formatDateTime(n.nextAttemptAt)}</div>
                    ) : null}
                    {n.deliveredAt ? (
                      <div class="muted ac-small">at {formatDateTime(n.deliveredAt)}</div>
                    ) : null}
                  </td>
                  <td>
                    {n.attempts.length === 0 ? (
                      <span class="muted">none yet</span>
                    ) : (
                      <details class="ac-details">
                        <summary>
                          {n.attempts.length} {n.attempts.length === 1 ? 'attempt' : 'attempts'}
                          <span class="visually-hidden"> of notification {n.id}</span>
                        </summary>
                        <AttemptsTable attempts={n.attempts} caption={`Attempts of notification ${n.id}`} />
                        <p class="muted ac-small">
                          Idempotency key <code>{n.idempotencyKey}</code>
                        </p>
                      </details>
                    )}
                    {n.lastError && n.state !== 'DELIVERED' ? (
                      <p class="ac-excerpt ac-error ac-small">{n.lastError}</p>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {page > 1 || more ? (
        <nav class="misc-buttons ac-pages" aria-label="Notification log pages">
          <button
            type="button"
            class="button-secondary"
            disabled={page === 1}
            onClick={() => setPage((p) => Math.max(1, p - 1))}
          >
            Newer
          </button>
          <span>Page {page}</span>
          <button
            type="button"
            class="button-secondary"
            disabled={!more}
            onClick={() => setPage((p) => p + 1)}
          >
            Older
          </button>
        </nav>
      ) : null}
    </section>
  );
}
