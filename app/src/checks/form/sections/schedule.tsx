/**
 * Frequency, locations and group; response time limits; retries.
 */
import { RETRY_STRATEGY_TYPES } from '../../../../../src/protocol/enums.js';
import { agentState, offeredRegions, servedRegions } from '../model/locations.js';
import {
  Checkbox,
  CheckboxGroup,
  type FormApi,
  NumberInput,
  type Option,
  SelectInput,
} from '../controls/inputs.js';
import {
  RESPONSE_TIME_DEFAULTS,
  SUB_MINUTE_OFFSETS,
  frequenciesOf,
  frequencyLabel,
  offsetFits,
} from '../model/types.js';
import type { References } from './general.js';
import { options } from './general.js';
import { idOrNull } from './general.js';
import { isObject } from '../model/paths.js';

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
      {refs.privateLocations ? (
        <CheckboxGroup
          fx={fx}
          path="privateLocations"
          legend="Private locations"
          hint="Served only by the agents holding the location's key: this machine's own agent serves local."
          options={refs.privateLocations.map((p) => ({
            value: p.slugName,
            label: `${p.name} (${p.slugName}): ${agentState(p.agentCount)}`,
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
      <RegionChoice fx={fx} refs={refs} />
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

/**
 * The data-center locations (`locations`) agents with an account key serve, each with how many, and those the
 * check already names (flagged when nothing serves them). None listed: a sentence says how to get one.
 */
function RegionChoice({ fx, refs }: { fx: FormApi; refs: References }) {
  const chosen = (fx.get('locations') as string[] | null | undefined) ?? [];
  const served = servedRegions(refs.agents ?? []);
  const offered = offeredRegions(served, chosen);
  const label = (l: string) => {
    const agents = served.get(l) ?? 0;
    const where = `${l} (${LOCATION_NAMES[l] ?? l})`;
    return agents > 0 ? `${where}: ${agentState(agents)}` : `${where}: no agent serves it, its runs expire`;
  };
  return (
    <CheckboxGroup
      fx={fx}
      path="locations"
      legend="Data-center locations"
      hint="The hosted API's location names. One is listed when an agent started with an account API key serves it (AGENT_LOCATIONS)."
      options={offered.map((l) => ({ value: l, label: label(l) }))}
      empty="No agent serves a data-center location: run checks in a private location."
    />
  );
}

/** The check group (`groupId`). */
function GroupSelect({ fx, refs }: { fx: FormApi; refs: References }) {
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
const RETRY_DEFAULTS = {
  baseBackoffSeconds: 60,
  maxRetries: 2,
  maxDurationSeconds: 600,
  sameRegion: true,
};

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
