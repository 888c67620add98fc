import { describe, expect, it } from 'vitest';
import { type AlertState, evaluate, runVerdict } from '../../../src/service/alerting/engine.js';
import {
  type AlertSettingsDoc,
  type AlertSettingsSource,
  DEFAULT_ALERT_SETTINGS_DOC,
  resolveAlertSettings,
} from '../../../src/service/alerting/settings.js';
import type { AlertRun, EngineAlert } from '../../../src/service/alerting/types.js';

/**
 * A row is a check's history written as tokens, one run or mute toggle each:
 * - `F@3`, `D@3`, `P@3`: a failing, degraded or passing run that started at minute 3;
 * - `A@3`: a failing ATTEMPT run (a retry follows);
 * - `p:FFDP@3`: a parallel run, one letter per location (F failed, D degraded, P passed);
 * - `M`, `U`: mute, unmute the check.
 * Each run is evaluated 30 s after it started. The expected alerts read `<minute> <type>`, with
 * ` (silent)` when the alert does not notify.
 */
type Row = {
  name: string;
  runs: string;
  expect: string[];
  /** The check's own settings (it does not use the account's). */
  settings?: AlertSettingsDoc;
  /** Resolution rows: the account's settings, the group and the check as stored. */
  account?: AlertSettingsDoc;
  group?: AlertSettingsSource;
  check?: AlertSettingsSource;
};

const MIN = 60_000;
const EVALUATED_AFTER_MS = 30_000;

function parseRun(token: string, index: number): { run: AlertRun; minute: number } {
  const m = /^(F|D|P|A|p:[FDP]+)@(\d+(?:\.\d+)?)$/.exec(token);
  if (!m) throw new Error(`bad token ${token}`);
  const minute = Number(m[2]);
  const letters = m[1]!.startsWith('p:') ? m[1]!.slice(2) : m[1] === 'A' ? 'F' : m[1]!;
  return {
    minute,
    run: {
      resultId: `r${index}`,
      resultType: m[1] === 'A' ? 'ATTEMPT' : 'FINAL',
      parallel: m[1]!.startsWith('p:'),
      locations: [...letters].map((l, i) => ({
        location: `loc-${i}`,
        failed: l === 'F',
        degraded: l === 'D',
      })),
      startedAtMs: minute * MIN,
    },
  };
}

function play(row: Row): { lines: string[]; alerts: EngineAlert[]; states: AlertState[] } {
  let check: AlertSettingsSource & { muted: boolean } = row.settings
    ? { alertSettings: row.settings, useGlobalAlertSettings: false, muted: false }
    : { ...row.check, muted: row.check?.muted === true };
  let state: AlertState | null = null;
  const lines: string[] = [];
  const alerts: EngineAlert[] = [];
  const states: AlertState[] = [];
  row.runs
    .split(/\s+/)
    .filter(Boolean)
    .forEach((token, index) => {
      if (token === 'M' || token === 'U') {
        check = { ...check, muted: token === 'M' };
        return;
      }
      const { run, minute } = parseRun(token, index);
      const settings = resolveAlertSettings(row.account ?? null, row.group ?? null, check);
      const result = evaluate(state, run, settings, run.startedAtMs + EVALUATED_AFTER_MS);
      state = result.state;
      states.push(state);
      for (const a of result.alerts) {
        alerts.push(a);
        lines.push(`${minute} ${a.alertType}${a.notify ? '' : ' (silent)'}`);
      }
    });
  return { lines, alerts, states };
}

/** `count` runs of `kind` one minute apart from minute `from`. */
function every(kind: string, from: number, count: number): string {
  return Array.from({ length: count }, (_, i) => `${kind}@${from + i}`).join(' ');
}

const alertTypeRows: Row[] = [
  { name: 'failure then recovery', runs: 'P@0 F@1 F@2 P@3', expect: ['1 ALERT_FAILURE', '3 ALERT_RECOVERY'] },
  {
    name: 'degraded then degraded recovery',
    runs: 'D@0 D@1 P@2',
    expect: ['0 ALERT_DEGRADED', '2 ALERT_DEGRADED_RECOVERY'],
  },
  {
    name: 'failure de-escalates to degraded, then recovery',
    runs: 'F@0 D@1 D@2 P@3',
    expect: ['0 ALERT_FAILURE', '1 ALERT_FAILURE_DEGRADED', '3 ALERT_RECOVERY'],
  },
  {
    name: 'degraded escalates to failure, then recovery (not degraded recovery)',
    runs: 'D@0 F@1 P@2',
    expect: ['0 ALERT_DEGRADED', '1 ALERT_DEGRADED_FAILURE', '2 ALERT_RECOVERY'],
  },
  {
    name: 'failure reminder',
    settings: { reminders: { amount: 1, interval: 5 } },
    runs: every('F', 0, 7),
    expect: ['0 ALERT_FAILURE', '5 ALERT_FAILURE_REMAIN'],
  },
  {
    name: 'degraded reminder',
    settings: { reminders: { amount: 1, interval: 5 } },
    runs: every('D', 0, 7),
    expect: ['0 ALERT_DEGRADED', '5 ALERT_DEGRADED_REMAIN'],
  },
  {
    name: 'flapping: every change alerts at once',
    runs: 'D@0 F@1 D@2 F@3 P@4',
    expect: [
      '0 ALERT_DEGRADED',
      '1 ALERT_DEGRADED_FAILURE',
      '2 ALERT_FAILURE_DEGRADED',
      '3 ALERT_DEGRADED_FAILURE',
      '4 ALERT_RECOVERY',
    ],
  },
  { name: 'passing runs raise nothing', runs: every('P', 0, 5), expect: [] },
];

const runBasedRows: Row[] = [1, 2, 3, 4, 5].flatMap((t): Row[] => [
  {
    name: `RUN_BASED ${t}: alerts at failing run ${t}`,
    settings: { runBasedEscalation: { failedRunThreshold: t } },
    runs: `${every('F', 0, t + 1)} P@${t + 1}`,
    expect: [`${t - 1} ALERT_FAILURE`, `${t + 1} ALERT_RECOVERY`],
  },
  {
    name: `RUN_BASED ${t}: ${t - 1} failing runs end silently`,
    settings: { runBasedEscalation: { failedRunThreshold: t } },
    runs: `${every('F', 0, t - 1)} P@${t} ${every('F', t + 1, t - 1)} P@${2 * t + 1}`,
    expect: [],
  },
  {
    name: `RUN_BASED ${t}: degraded runs count toward a failure (flapping does not dodge it)`,
    settings: { runBasedEscalation: { failedRunThreshold: t } },
    runs: `${every('D', 0, t - 1)} F@${t - 1} P@${t}`,
    expect: [`${t - 1} ALERT_FAILURE`, `${t} ALERT_RECOVERY`],
  },
  {
    name: `RUN_BASED ${t}: attempts do not count`,
    settings: { runBasedEscalation: { failedRunThreshold: t } },
    runs: `${every('A', 0, 3)} ${every('F', 3, t - 1)} A@${t + 2} F@${t + 3}`,
    expect: [`${t + 3} ALERT_FAILURE`],
  },
]);

const timeBasedRows: Row[] = [5, 10, 15, 30].flatMap((m): Row[] => [
  {
    name: `TIME_BASED ${m} min: alerts at the first run ${m} min into the episode`,
    settings: { escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: m } },
    runs: `P@0 ${every('F', 1, m + 2)} P@${m + 3}`,
    expect: [`${m + 1} ALERT_FAILURE`, `${m + 3} ALERT_RECOVERY`],
  },
  {
    name: `TIME_BASED ${m} min: an episode shorter than that ends silently`,
    settings: { escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: m } },
    runs: `${every('F', 0, m)} P@${m}`,
    expect: [],
  },
  {
    name: `TIME_BASED ${m} min: judged at runs only (a gap alerts at the next run)`,
    settings: { escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: m } },
    runs: `D@0 D@${m + 7} F@${m + 8}`,
    expect: [`${m + 7} ALERT_DEGRADED`, `${m + 8} ALERT_DEGRADED_FAILURE`],
  },
  {
    name: `TIME_BASED ${m} min: counts from the episode's first run (degraded, then failing)`,
    settings: { escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: m } },
    runs: `D@0 F@${m - 1} F@${m}`,
    expect: [`${m} ALERT_FAILURE`],
  },
]);

const reminderRows: Row[] = [
  {
    name: 'reminders 0: none, however long it fails',
    settings: { reminders: { amount: 0, interval: 5 } },
    runs: every('F', 0, 40),
    expect: ['0 ALERT_FAILURE'],
  },
  {
    name: 'reminders 2 every 5 min: two, then silence until recovery',
    settings: { reminders: { amount: 2, interval: 5 } },
    runs: `${every('F', 0, 30)} P@30`,
    expect: ['0 ALERT_FAILURE', '5 ALERT_FAILURE_REMAIN', '10 ALERT_FAILURE_REMAIN', '30 ALERT_RECOVERY'],
  },
  {
    name: 'reminders unlimited every 5 min: one per interval until recovery',
    settings: { reminders: { amount: 100_000, interval: 5 } },
    runs: `${every('F', 0, 26)} P@26`,
    expect: [
      '0 ALERT_FAILURE',
      ...[5, 10, 15, 20, 25].map((m) => `${m} ALERT_FAILURE_REMAIN`),
      '26 ALERT_RECOVERY',
    ],
  },
  {
    name: 'reminders 2 every 10 min: at runs only, counted from the last alert',
    settings: { reminders: { amount: 2, interval: 10 } },
    runs: 'F@0 F@7 F@12 F@21 F@23 F@40',
    expect: ['0 ALERT_FAILURE', '12 ALERT_FAILURE_REMAIN', '23 ALERT_FAILURE_REMAIN'],
  },
  {
    name: 'reminders 2: a change of state restarts the count and the interval',
    settings: { reminders: { amount: 2, interval: 5 } },
    runs: `${every('F', 0, 12)} ${every('D', 12, 12)}`,
    expect: [
      '0 ALERT_FAILURE',
      '5 ALERT_FAILURE_REMAIN',
      '10 ALERT_FAILURE_REMAIN',
      '12 ALERT_FAILURE_DEGRADED',
      '17 ALERT_DEGRADED_REMAIN',
      '22 ALERT_DEGRADED_REMAIN',
    ],
  },
  {
    name: 'reminders: none before the threshold is reached',
    settings: { runBasedEscalation: { failedRunThreshold: 3 }, reminders: { amount: 2, interval: 1 } },
    runs: every('F', 0, 4),
    expect: ['2 ALERT_FAILURE', '3 ALERT_FAILURE_REMAIN'],
  },
];

const parallelRows: Row[] = [
  {
    name: 'parallel, threshold off: one failed location fails the run',
    runs: 'p:FPPP@0 p:PPPP@1',
    expect: ['0 ALERT_FAILURE', '1 ALERT_RECOVERY'],
  },
  {
    name: 'parallel, threshold off: a degraded location degrades it',
    runs: 'p:DPPP@0 p:PPPP@1',
    expect: ['0 ALERT_DEGRADED', '1 ALERT_DEGRADED_RECOVERY'],
  },
  {
    name: 'parallel 50 %: 1 of 4 failed is degraded, 2 of 4 fail',
    settings: { parallelRunFailureThreshold: { enabled: true, percentage: 50 } },
    runs: 'p:FPPP@0 p:FFPP@1 p:PPPP@2',
    expect: ['0 ALERT_DEGRADED', '1 ALERT_DEGRADED_FAILURE', '2 ALERT_RECOVERY'],
  },
  {
    name: 'parallel 100 %: 3 of 4 failed is degraded, 4 of 4 fail',
    settings: { parallelRunFailureThreshold: { enabled: true, percentage: 100 } },
    runs: 'p:FFFP@0 p:FFFF@1 p:FFFD@2',
    expect: ['0 ALERT_DEGRADED', '1 ALERT_DEGRADED_FAILURE', '2 ALERT_FAILURE_DEGRADED'],
  },
  {
    name: 'parallel 100 %: a single location',
    settings: { parallelRunFailureThreshold: { enabled: true, percentage: 100 } },
    runs: 'p:F@0 p:P@1',
    expect: ['0 ALERT_FAILURE', '1 ALERT_RECOVERY'],
  },
  {
    name: 'parallel threshold does not apply to a run that is not parallel',
    settings: { parallelRunFailureThreshold: { enabled: true, percentage: 100 } },
    runs: 'F@0 P@1',
    expect: ['0 ALERT_FAILURE', '1 ALERT_RECOVERY'],
  },
  {
    name: 'parallel 50 % with RUN_BASED 2: degraded and failing runs count alike',
    settings: {
      runBasedEscalation: { failedRunThreshold: 2 },
      parallelRunFailureThreshold: { enabled: true, percentage: 50 },
    },
    runs: 'p:FPPP@0 p:FFPP@1',
    expect: ['1 ALERT_FAILURE'],
  },
];

const muteRows: Row[] = [
  {
    name: 'muted check: alerts recorded, nothing notified',
    check: { muted: true },
    runs: 'F@0 D@1 F@2 P@3',
    expect: [
      '0 ALERT_FAILURE (silent)',
      '1 ALERT_FAILURE_DEGRADED (silent)',
      '2 ALERT_DEGRADED_FAILURE (silent)',
      '3 ALERT_RECOVERY (silent)',
    ],
  },
  {
    name: 'muted group: its check notifies nobody',
    group: { muted: true },
    runs: 'D@0 P@1',
    expect: ['0 ALERT_DEGRADED (silent)', '1 ALERT_DEGRADED_RECOVERY (silent)'],
  },
  {
    name: 'failure while muted, unmuted: no reminder, no recovery (nothing replayed)',
    settings: { reminders: { amount: 100_000, interval: 1 } },
    runs: 'M F@0 U F@1 D@2 P@3 F@4 P@5',
    expect: [
      '0 ALERT_FAILURE (silent)',
      '1 ALERT_FAILURE_REMAIN (silent)',
      '2 ALERT_FAILURE_DEGRADED (silent)',
      '3 ALERT_RECOVERY (silent)',
      '4 ALERT_FAILURE',
      '5 ALERT_RECOVERY',
    ],
  },
  {
    name: 'degraded while muted, unmuted, then failing: the new failure and its recovery notify',
    runs: 'M D@0 U F@1 P@2',
    expect: ['0 ALERT_DEGRADED (silent)', '1 ALERT_DEGRADED_FAILURE', '2 ALERT_RECOVERY'],
  },
  {
    name: 'degraded while muted, unmuted: its recovery stays silent',
    runs: 'M D@0 U D@1 P@2',
    expect: ['0 ALERT_DEGRADED (silent)', '2 ALERT_DEGRADED_RECOVERY (silent)'],
  },
  {
    name: 'failure notified, muted: the recovery is silent',
    runs: 'F@0 M P@1 U F@2 P@3',
    expect: ['0 ALERT_FAILURE', '1 ALERT_RECOVERY (silent)', '2 ALERT_FAILURE', '3 ALERT_RECOVERY'],
  },
  {
    name: 'failure notified, de-escalation muted, unmuted: the recovery still closes what people heard',
    runs: 'F@0 M D@1 U P@2',
    expect: ['0 ALERT_FAILURE', '1 ALERT_FAILURE_DEGRADED (silent)', '2 ALERT_RECOVERY'],
  },
  {
    name: 'reminders are silent while muted and notify again on unmute',
    settings: { reminders: { amount: 100_000, interval: 1 } },
    runs: 'F@0 F@1 M F@2 U F@3',
    expect: [
      '0 ALERT_FAILURE',
      '1 ALERT_FAILURE_REMAIN',
      '2 ALERT_FAILURE_REMAIN (silent)',
      '3 ALERT_FAILURE_REMAIN',
    ],
  },
];

// The account says RUN_BASED 3; the group and the check say RUN_BASED 1 or 2.
const threeRuns: AlertSettingsDoc = { runBasedEscalation: { failedRunThreshold: 3 } };
const oneRun: AlertSettingsDoc = { runBasedEscalation: { failedRunThreshold: 1 } };
const twoRuns: AlertSettingsDoc = { runBasedEscalation: { failedRunThreshold: 2 } };
const failing = every('F', 0, 4);
const resolutionRows: Row[] = [
  {
    name: 'no group, useGlobalAlertSettings absent: the account',
    account: threeRuns,
    check: { alertSettings: oneRun },
    runs: failing,
    expect: ['2 ALERT_FAILURE'],
  },
  {
    name: 'no group, useGlobalAlertSettings false: the check',
    account: threeRuns,
    check: { alertSettings: oneRun, useGlobalAlertSettings: false },
    runs: failing,
    expect: ['0 ALERT_FAILURE'],
  },
  {
    name: 'no group, no account settings: the defaults (first failing run)',
    check: { alertSettings: threeRuns },
    runs: failing,
    expect: ['0 ALERT_FAILURE'],
  },
  {
    name: 'group with useGlobalAlertSettings false: the group, not the check',
    account: threeRuns,
    group: { alertSettings: twoRuns, useGlobalAlertSettings: false },
    check: { alertSettings: oneRun, useGlobalAlertSettings: false },
    runs: failing,
    expect: ['1 ALERT_FAILURE'],
  },
  {
    name: 'group with useGlobalAlertSettings null: the account, not the check',
    account: threeRuns,
    group: { alertSettings: twoRuns, useGlobalAlertSettings: null },
    check: { alertSettings: oneRun, useGlobalAlertSettings: false },
    runs: failing,
    expect: ['2 ALERT_FAILURE'],
  },
  {
    name: 'group with useGlobalAlertSettings true: the account',
    account: threeRuns,
    group: { alertSettings: twoRuns, useGlobalAlertSettings: true },
    runs: failing,
    expect: ['2 ALERT_FAILURE'],
  },
  {
    name: "account's partial settings: missing fields take the defaults",
    account: { reminders: { amount: 1 } },
    runs: every('F', 0, 12),
    expect: ['0 ALERT_FAILURE', '5 ALERT_FAILURE_REMAIN'],
  },
];

describe('alert engine: table of histories', () => {
  const groups: [string, Row[]][] = [
    ['alert types', alertTypeRows],
    ['RUN_BASED thresholds', runBasedRows],
    ['TIME_BASED thresholds', timeBasedRows],
    ['reminders', reminderRows],
    ['parallel runs', parallelRows],
    ['mute', muteRows],
    ['settings resolution', resolutionRows],
  ];
  for (const [title, rows] of groups) {
    describe(title, () => {
      it.each(rows.map((r) => [r.name, r] as const))('%s', (_name, row) => {
        expect(play(row).lines).toEqual(row.expect);
      });
    });
  }
});

describe('alert engine: alert fields', () => {
  it('an episode is named by its first non-passing run; sequence counts alerts of a type in it', () => {
    const { alerts } = play({ name: '', runs: 'P@0 D@1 F@2 D@3 F@4 P@5 F@6 P@7', expect: [] });
    expect(alerts.map((a) => [a.alertType, a.episodeId, a.sequence, a.resultId])).toEqual([
      ['ALERT_DEGRADED', 'r1', 0, 'r1'],
      ['ALERT_DEGRADED_FAILURE', 'r1', 0, 'r2'],
      ['ALERT_FAILURE_DEGRADED', 'r1', 0, 'r3'],
      ['ALERT_DEGRADED_FAILURE', 'r1', 1, 'r4'],
      ['ALERT_RECOVERY', 'r1', 0, 'r5'],
      ['ALERT_FAILURE', 'r6', 0, 'r6'],
      ['ALERT_RECOVERY', 'r6', 0, 'r7'],
    ]);
  });

  it('reminders carry isReminder and reminderSequence 1, 2, … (restarting after a change of state)', () => {
    const { alerts } = play({
      name: '',
      settings: { reminders: { amount: 100_000, interval: 1 } },
      runs: 'F@0 F@1 F@2 D@3 D@4 F@5 F@6',
      expect: [],
    });
    expect(alerts.map((a) => [a.alertType, a.isReminder, a.reminderSequence, a.sequence])).toEqual([
      ['ALERT_FAILURE', false, 0, 0],
      ['ALERT_FAILURE_REMAIN', true, 1, 0],
      ['ALERT_FAILURE_REMAIN', true, 2, 1],
      ['ALERT_FAILURE_DEGRADED', false, 0, 0],
      ['ALERT_DEGRADED_REMAIN', true, 1, 0],
      ['ALERT_DEGRADED_FAILURE', false, 0, 0],
      ['ALERT_FAILURE_REMAIN', true, 1, 2],
    ]);
  });

  it('an ATTEMPT returns the previous state as it was, or a fresh one', () => {
    const settings = resolveAlertSettings(null, null, { muted: false });
    const attempt = parseRun('A@1', 1).run;
    expect(evaluate(null, attempt, settings, MIN)).toEqual({
      state: { version: 1, episode: null },
      alerts: [],
    });
    const { states } = play({ name: '', runs: 'F@0', expect: [] });
    const before = JSON.stringify(states[0]);
    const after = evaluate(states[0]!, attempt, settings, 2 * MIN);
    expect(after.alerts).toEqual([]);
    expect(JSON.stringify(after.state)).toBe(before);
  });

  it('evaluate does not modify the state it is given', () => {
    const { states } = play({ name: '', runs: 'D@0', expect: [] });
    const before = JSON.stringify(states[0]);
    const settings = resolveAlertSettings(null, null, { muted: false });
    evaluate(states[0]!, parseRun('F@1', 1).run, settings, 2 * MIN);
    expect(JSON.stringify(states[0])).toBe(before);
  });

  it('a state of another version is treated as none', () => {
    const settings = resolveAlertSettings(null, null, { muted: false });
    const stale = { version: 0, episode: { id: 'old' } } as unknown as AlertState;
    const { alerts } = evaluate(stale, parseRun('F@0', 9).run, settings, MIN);
    expect(alerts.map((a) => [a.alertType, a.episodeId])).toEqual([['ALERT_FAILURE', 'r9']]);
  });
});

describe('runVerdict', () => {
  const settings = (enabled: boolean, percentage: number) =>
    resolveAlertSettings({ parallelRunFailureThreshold: { enabled, percentage } }, null, { muted: false });
  it.each([
    ['F', false, 0, 'FAILING'],
    ['D', false, 0, 'DEGRADED'],
    ['P', false, 0, 'PASSING'],
    ['p:PPPP', true, 0, 'PASSING'],
    ['p:PPPP', true, 50, 'PASSING'],
    ['p:DPPP', true, 50, 'DEGRADED'],
    ['p:FPPP', false, 0, 'FAILING'],
    ['p:FPPP', true, 25, 'FAILING'],
    ['p:FPPP', true, 26, 'DEGRADED'],
    ['p:FFFP', true, 75, 'FAILING'],
    ['p:FFFP', true, 100, 'DEGRADED'],
    ['p:FFFF', true, 100, 'FAILING'],
    ['p:FPP', true, 33.3, 'FAILING'],
    ['p:FPP', true, 33.4, 'DEGRADED'],
  ] as const)('%s, threshold enabled %s at %s %% → %s', (runs, enabled, percentage, verdict) => {
    expect(runVerdict(parseRun(`${runs}@0`, 0).run, settings(enabled, percentage))).toBe(verdict);
  });
});

describe('resolveAlertSettings', () => {
  it('fills every field from the defaults when nothing is set', () => {
    expect(resolveAlertSettings(null, null, { muted: false })).toEqual({
      escalationType: 'RUN_BASED',
      failedRunThreshold: 1,
      minutesFailingThreshold: 5,
      reminders: { amount: 0, intervalMinutes: 5 },
      parallelRunFailureThreshold: { enabled: false, percentage: 10 },
      muted: false,
    });
    expect(resolveAlertSettings(DEFAULT_ALERT_SETTINGS_DOC, null, { muted: false })).toEqual(
      resolveAlertSettings(null, null, { muted: false }),
    );
  });

  it('takes each field on its own, the rest from the defaults', () => {
    const account: AlertSettingsDoc = {
      escalationType: 'TIME_BASED',
      timeBasedEscalation: { minutesFailingThreshold: 15 },
      reminders: { interval: 30 },
      parallelRunFailureThreshold: { enabled: true },
    };
    expect(resolveAlertSettings(account, null, { muted: false })).toEqual({
      escalationType: 'TIME_BASED',
      failedRunThreshold: 1,
      minutesFailingThreshold: 15,
      reminders: { amount: 0, intervalMinutes: 30 },
      parallelRunFailureThreshold: { enabled: true, percentage: 10 },
      muted: false,
    });
  });

  it('a group using its own settings with none stored gets the defaults, not the account', () => {
    const resolved = resolveAlertSettings(threeRuns, { useGlobalAlertSettings: false }, { muted: false });
    expect(resolved.failedRunThreshold).toBe(1);
  });

  it('ignores values that are not finite numbers (a stored document gone wrong)', () => {
    const broken = { runBasedEscalation: { failedRunThreshold: Number.NaN }, reminders: { amount: null } };
    const resolved = resolveAlertSettings(broken as unknown as AlertSettingsDoc, null, { muted: false });
    expect([resolved.failedRunThreshold, resolved.reminders.amount]).toEqual([1, 0]);
  });

  it.each([
    [false, null, false],
    [true, null, true],
    [false, false, false],
    [false, true, true],
    [true, false, true],
  ] as const)('check muted %s, group muted %s → muted %s', (checkMuted, groupMuted, muted) => {
    const group = groupMuted === null ? null : { muted: groupMuted };
    expect(resolveAlertSettings(null, group, { muted: checkMuted }).muted).toBe(muted);
  });
});
