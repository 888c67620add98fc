/**
 * The fields of an alert channel's `config`, per type.
 */
import { SelectField, TextAreaField, TextField } from '../../ui/forms.js';
import type { AlertChannelType } from '../../api/schemas.js';
import { errorOf } from '../../ui/widgets.js';
import { type ConfigState, type KeyValue, MASK } from './describe.js';

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
export function KeyValueRows({
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
/** What every config control of a channel type takes. */
type Common = { config: ConfigState; error: unknown; onChange: (name: string, value: string) => void };

/** The config fields of a channel type. */
export function ConfigFields({
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
      return <SlackFields common={common} />;
    case 'WEBHOOK':
      return (
        <WebhookFields
          common={common}
          headers={headers}
          queryParameters={queryParameters}
          secretHint={secretHint}
          onHeaders={onHeaders}
          onQueryParameters={onQueryParameters}
        />
      );
    case 'SMS':
    case 'CALL':
      return <PhoneFields common={common} />;
    case 'PAGERDUTY':
      return <PagerDutyFields common={common} secretHint={secretHint} />;
    case 'OPSGENIE':
      return <OpsgenieFields common={common} secretHint={secretHint} />;
  }
}

/** A Slack channel's config: the incoming webhook's URL and the channel. */
function SlackFields({ common }: { common: Common }) {
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
}

/** An SMS or call channel's config: name and phone number. */
function PhoneFields({ common }: { common: Common }) {
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
}

/** A PagerDuty channel's config: integration key, account and service name. */
function PagerDutyFields({ common, secretHint }: { common: Common; secretHint: string | undefined }) {
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
}

/** An Opsgenie channel's config: name, API key, region and priority. */
function OpsgenieFields({ common, secretHint }: { common: Common; secretHint: string | undefined }) {
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

/** A webhook's config: name, URL, method, headers, query parameters, body template, secret and type. */
function WebhookFields({
  common,
  headers,
  queryParameters,
  secretHint,
  onHeaders,
  onQueryParameters,
}: {
  common: Common;
  headers: KeyValue[];
  queryParameters: KeyValue[];
  secretHint: string | undefined;
  onHeaders: (rows: KeyValue[]) => void;
  onQueryParameters: (rows: KeyValue[]) => void;
}) {
  const { config, error, onChange: onConfig } = common;
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
}
