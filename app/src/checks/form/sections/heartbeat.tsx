/**
 * A heartbeat monitor's expected pings (a period or a cron schedule, and the grace) and its ping URL.
 */
import { useState } from 'preact/hooks';
import { type FormApi, NumberInput, RadioLine, SelectInput, TextInput } from '../controls/inputs.js';
import { options } from './general.js';
import { isObject } from '../model/paths.js';

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
        <RadioLine
          id="heartbeat-period"
          name="heartbeat-mode"
          label="Every period"
          checked={!cron}
          onChoose={() => setMode(false)}
        />
        <RadioLine
          id="heartbeat-cron"
          name="heartbeat-mode"
          label="On a cron schedule"
          checked={cron}
          onChoose={() => setMode(true)}
        />
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
