import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatDateTime, formatMs } from './format.js';
import { summarize } from './sparkline.js';

/** One line (or one stacked layer) of a {@link TimeChart}: its name and one value per time, null for none. */
export type ChartSeries = { label: string; values: (number | null)[] };

/**
 * A run marked on a chart at its time (epoch ms) and value: a failed run as a red ✕, a degraded one as an
 * amber ▲ (colours `--bad` and `--warn`). A value above the plot is drawn at its top edge.
 */
export type ChartMark = { t: number; v: number; kind: 'failed' | 'degraded' };

/** How a {@link TimeChart} draws its series. */
type ChartKind = 'lines' | 'stacked-bars';

/** Props of {@link TimeChart}. */
type TimeChartProps = {
  /** The visible caption, also the start of the chart's text alternative. */
  caption: string;
  /** Epoch milliseconds, ascending, one per value of every series. */
  times: readonly number[];
  series: readonly ChartSeries[];
  /** `lines` (default): one line per series; `stacked-bars`: the series stacked into one bar per time. */
  kind?: ChartKind;
  /** The time axis' span, epoch ms (the whole window, even where it has no data); default the data's. */
  range?: readonly [number, number];
  /** Height of the plot, CSS pixels; default 240. */
  height?: number;
  /** Formats a value for the axis, the legend and the table; default {@link formatMs}. */
  format?: (value: number) => string;
  /** Said when there is nothing to draw. */
  emptyText?: string;
  /** Runs to mark over the series (failed, degraded); the legend counts them. */
  marks?: readonly ChartMark[];
};

/** The CSS custom properties series take their colours from, in order (styles.css, light and dark). */
const SERIES_TOKENS = ['--chart-1', '--chart-2', '--chart-3', '--chart-4', '--chart-5'] as const;
/** After the five colours, series repeat them dashed, then dotted. */
const DASHES: readonly (number[] | undefined)[] = [undefined, [6, 4], [2, 3]];

/** The colour token and dash pattern of the series at `index`. */
function lookOf(index: number): { token: string; dash: number[] | undefined } {
  return {
    token: SERIES_TOKENS[index % SERIES_TOKENS.length] ?? '--chart-1',
    dash: DASHES[Math.floor(index / SERIES_TOKENS.length) % DASHES.length],
  };
}

/**
 * Reads the colours of the current scheme from the CSS tokens (so dark mode draws in dark-mode colours); a
 * token that is missing falls back to the text colour.
 */
function readColours(el: Element): { series: string[]; axis: string; grid: string; bg: string } {
  const style = getComputedStyle(el);
  const text = style.color;
  const get = (name: string) => style.getPropertyValue(name).trim() || text;
  return {
    series: SERIES_TOKENS.map((t) => get(t)),
    axis: get('--fg-muted'),
    grid: get('--border'),
    bg: get('--bg'),
  };
}

/**
 * The series as uPlot draws them. Stacked bars: each layer's cumulative sum (a time where every layer is
 * null stays null), the top layer first, so each bar drawn later covers the lower part of the one before.
 */
function plotData(
  times: readonly number[],
  series: readonly ChartSeries[],
  kind: ChartKind,
): { data: uPlot.AlignedData; order: number[] } {
  const xs = times.map((t) => t / 1000);
  if (kind === 'lines') return { data: [xs, ...series.map((s) => s.values)], order: series.map((_, i) => i) };
  const cumulative: (number | null)[][] = [];
  let running: (number | null)[] = times.map(() => null);
  for (const s of series) {
    running = running.map((prev, i) => {
      const v = s.values[i];
      if (v === null || v === undefined) return prev;
      return (prev ?? 0) + v;
    });
    cumulative.push(running);
  }
  const order = series.map((_, i) => series.length - 1 - i);
  return { data: [xs, ...order.map((i) => cumulative[i] ?? [])], order };
}

/**
 * A time-series chart drawn by uPlot, with what a chart must have to be read by everyone: a caption, a
 * legend naming each series with its min / avg / max as text, and the same data as a table under a
 * disclosure. The canvas itself is hidden from assistive technology (the text says it all).
 *
 * uPlot is created on mount, given new data with `setData` when only the values change (re-created when
 * the series or the colour scheme change), resized with its container (ResizeObserver), and destroyed on
 * unmount. Colours come from the CSS tokens `--chart-1…5`, `--fg-muted` and `--border`.
 */

type Colours = ReturnType<typeof readColours>;
type Raw = { series: readonly ChartSeries[]; order: number[]; times: readonly number[] };
type Ref<T> = { current: T };

/** The uPlot series of the drawn layers, in drawing order: bars or (dashed after the fifth) lines. */
function seriesOptions(colours: Colours, labelled: readonly ChartSeries[], drawn: number[], kind: ChartKind) {
  const bars = kind === 'stacked-bars' ? uPlot.paths.bars?.({ size: [0.85, 48], gap: 1 }) : undefined;
  return drawn.map((i): uPlot.Series => {
    const look = lookOf(i);
    const colour =
      colours.series[SERIES_TOKENS.indexOf(look.token as (typeof SERIES_TOKENS)[number])] ?? colours.axis;
    const s = labelled[i];
    return bars
      ? {
          label: s?.label ?? '',
          stroke: colour,
          fill: colour,
          width: 0,
          paths: bars,
          points: { show: false },
        }
      : {
          label: s?.label ?? '',
          stroke: colour,
          width: 2,
          spanGaps: true,
          points: { size: 5, fill: colours.bg },
          ...(look.dash ? { dash: look.dash } : {}),
        };
  });
}

/** The cursor hook that writes the values under the cursor into the readout line. */
function readoutHook(
  readoutRef: Ref<HTMLParagraphElement | null>,
  rawRef: Ref<Raw>,
  fmt: (v: number) => string,
) {
  return (u: uPlot) => {
    const out = readoutRef.current;
    if (!out) return;
    const idx = u.cursor.idx;
    const { series: raw, times: ts } = rawRef.current;
    if (idx === null || idx === undefined || ts[idx] === undefined) {
      out.textContent = '\u00a0';
      return;
    }
    const parts = raw.map((s) => {
      const v = s.values[idx];
      return `${s.label} ${v === null || v === undefined ? '—' : fmt(v)}`;
    });
    out.textContent = `${formatDateTime(ts[idx])}: ${parts.join(', ')}`;
  };
}

/** The draw hook that paints the marks (✕ failed in `--bad`, ▲ degraded in `--warn`) over the plot. */
function marksHook(el: Element, marksRef: Ref<readonly ChartMark[]>) {
  return (u: uPlot) => {
    const marks = marksRef.current;
    if (marks.length === 0) return;
    const style = getComputedStyle(el);
    const colour = (name: string) => style.getPropertyValue(name).trim() || style.color;
    const ctx = u.ctx;
    const r = 5 * devicePixelRatio;
    const { left, top, width, height } = u.bbox;
    ctx.save();
    ctx.lineWidth = 2 * devicePixelRatio;
    for (const m of marks) {
      const x = u.valToPos(m.t / 1000, 'x', true);
      if (x < left || x > left + width) continue;
      const y = Math.min(top + height - r, Math.max(top + r, u.valToPos(m.v, 'y', true)));
      ctx.beginPath();
      if (m.kind === 'failed') {
        ctx.strokeStyle = colour('--bad');
        ctx.moveTo(x - r, y - r);
        ctx.lineTo(x + r, y + r);
        ctx.moveTo(x + r, y - r);
        ctx.lineTo(x - r, y + r);
        ctx.stroke();
      } else {
        ctx.fillStyle = colour('--warn');
        ctx.moveTo(x, y - r);
        ctx.lineTo(x + r, y + r);
        ctx.lineTo(x - r, y + r);
        ctx.closePath();
        ctx.fill();
      }
    }
    ctx.restore();
  };
}

/** The uPlot options of a chart in `el`: its scales, axes in the scheme's colours, series and readout. */
function chartOptions(
  el: HTMLElement,
  height: number,
  kind: ChartKind,
  refs: {
    range: Ref<readonly [number, number] | undefined>;
    readout: Ref<HTMLParagraphElement | null>;
    raw: Ref<Raw>;
    marks: Ref<readonly ChartMark[]>;
  },
  fmt: (v: number) => string,
): uPlot.Options {
  const colours = readColours(el);
  const { series: labelled, order: drawn } = refs.raw.current;
  // A new object for each axis: uPlot fills in the options it is given.
  const axis = () => ({
    stroke: colours.axis,
    grid: { stroke: colours.grid, width: 1 },
    ticks: { stroke: colours.grid },
  });
  return {
    width: Math.max(200, el.clientWidth),
    height,
    legend: { show: false },
    cursor: { drag: { x: false, y: false }, points: { size: 6 } },
    scales: {
      x: {
        time: true,
        // Read at each setData, so a new window moves the axis without re-creating the chart.
        range: (_u, min, max) => {
          const r = refs.range.current;
          return r ? [r[0] / 1000, r[1] / 1000] : [min, max];
        },
      },
      y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.08 : 1] },
    },
    axes: [axis(), { ...axis(), size: 64, values: (_u, splits) => splits.map((v) => fmt(v)) }],
    series: [{}, ...seriesOptions(colours, labelled, drawn, kind)],
    hooks: { setCursor: [readoutHook(refs.readout, refs.raw, fmt)], draw: [marksHook(el, refs.marks)] },
  };
}

/** A counter that moves when the system's colour scheme changes (so the chart is re-created in its colours). */
function useColourScheme(): number {
  const [scheme, setScheme] = useState(0);
  useEffect(() => {
    const query = window.matchMedia?.('(prefers-color-scheme: dark)');
    if (!query) return;
    const onChange = () => setScheme((n) => n + 1);
    query.addEventListener('change', onChange);
    return () => query.removeEventListener('change', onChange);
  }, []);
  return scheme;
}

/**
 * The uPlot chart in the element of the returned `plotRef`: created on mount, re-created when its structure
 * or the colour scheme changes, given new data with `setData`, resized with its container, destroyed on
 * unmount.
 */
function useUPlot({
  times,
  series,
  kind,
  range,
  height,
  format,
  marks,
}: Required<Pick<TimeChartProps, 'times' | 'series' | 'kind' | 'height' | 'format' | 'marks'>> & {
  range: readonly [number, number] | undefined;
}) {
  const plotRef = useRef<HTMLDivElement>(null);
  const readoutRef = useRef<HTMLParagraphElement>(null);
  const chartRef = useRef<uPlot | null>(null);
  const formatRef = useRef(format);
  formatRef.current = format;
  const scheme = useColourScheme();

  const { data, order } = useMemo(() => plotData(times, series, kind), [times, series, kind]);
  const structure = `${kind}|${series.map((s) => s.label).join('\u0000')}|${height}`;
  const rangeRef = useRef(range);
  rangeRef.current = range;
  const marksRef = useRef(marks);
  marksRef.current = marks;
  const rawRef = useRef<Raw>({ series, order, times });
  rawRef.current = { series, order, times };
  const empty = times.length === 0;

  useEffect(() => {
    const el = plotRef.current;
    if (!el || empty) return;
    const fmt = (v: number) => formatRef.current(v);
    const opts = chartOptions(
      el,
      height,
      kind,
      { range: rangeRef, readout: readoutRef, raw: rawRef, marks: marksRef },
      fmt,
    );
    const chart = new uPlot(opts, data, el);
    chartRef.current = chart;
    const observer = new ResizeObserver(() => {
      const width = Math.max(200, el.clientWidth);
      if (width !== chart.width) chart.setSize({ width, height });
    });
    observer.observe(el);
    return () => {
      observer.disconnect();
      chart.destroy();
      chartRef.current = null;
    };
    // `data` is handed over by the next effect; the chart is re-created only when its structure changes.
  }, [structure, scheme, empty]);

  useEffect(() => {
    const chart = chartRef.current;
    if (chart && chart.data !== data) chart.setData(data);
  }, [data]);

  useEffect(() => {
    chartRef.current?.redraw(false);
  }, [marks]);

  return { plotRef, readoutRef, empty };
}

/**
 * A time-series chart drawn by uPlot, with what a chart must have to be read by everyone: a caption, a
 * legend naming each series with its min / avg / max as text, and the same data as a table under a
 * disclosure. The canvas itself is hidden from assistive technology (the text says it all).
 *
 * uPlot is created on mount, given new data with `setData` when only the values change (re-created when
 * the series or the colour scheme change), resized with its container (ResizeObserver), and destroyed on
 * unmount. Colours come from the CSS tokens `--chart-1…5`, `--fg-muted` and `--border`.
 */
export function TimeChart({
  caption,
  times,
  series,
  kind = 'lines',
  range,
  height = 240,
  format = formatMs,
  emptyText = 'No runs in this window.',
  marks = NO_MARKS,
}: TimeChartProps) {
  const { plotRef, readoutRef, empty } = useUPlot({ times, series, kind, range, height, format, marks });

  return (
    <figure class="time-chart">
      <figcaption class="time-chart-caption">{caption}</figcaption>
      {empty ? (
        <p class="muted">{emptyText}</p>
      ) : (
        <>
          <ChartLegend series={series} kind={kind} format={format} marks={marks} />
          <div
            class="time-chart-plot"
            ref={plotRef}
            aria-hidden="true"
            style={{ minHeight: `${height}px` }}
          />
          <p class="time-chart-readout muted" ref={readoutRef} aria-hidden="true">
            {'\u00a0'}
          </p>
          <ChartTable caption={caption} times={times} series={series} format={format} />
        </>
      )}
    </figure>
  );
}

/** No marks (one array, so the chart is not redrawn for a new empty one). */
const NO_MARKS: readonly ChartMark[] = [];

/** The legend: each series' swatch, name and min / avg / max; then the marks' shapes and counts. */
function ChartLegend({
  series,
  kind,
  format,
  marks,
}: {
  series: readonly ChartSeries[];
  kind: ChartKind;
  format: (value: number) => string;
  marks: readonly ChartMark[];
}) {
  const failed = marks.filter((m) => m.kind === 'failed').length;
  const degraded = marks.length - failed;
  const stats = useMemo(() => series.map((s) => summarize(s.values)), [series]);
  return (
    <ul class="time-chart-legend">
      {series.map((s, i) => {
        const look = lookOf(i);
        const st = stats[i];
        return (
          <li key={s.label}>
            <svg
              class={`time-chart-swatch chart-colour-${look.token.slice('--chart-'.length)}`}
              width="22"
              height="12"
              aria-hidden="true"
            >
              {kind === 'stacked-bars' ? (
                <rect x="4" y="1" width="14" height="10" />
              ) : (
                <line x1="1" y1="6" x2="21" y2="6" stroke-dasharray={look.dash?.join(' ')} />
              )}
            </svg>
            <span class="time-chart-label">{s.label}</span>{' '}
            <span class="muted">
              {st ? `min ${format(st.min)}, avg ${format(st.avg)}, max ${format(st.max)}` : 'no data'}
            </span>
          </li>
        );
      })}
      {marks.length > 0 ? (
        <>
          <li>
            <svg class="time-chart-swatch" width="22" height="12" aria-hidden="true">
              <path d="M7 2 L15 10 M15 2 L7 10" style={{ stroke: 'var(--bad)', strokeWidth: 2 }} />
            </svg>
            <span class="time-chart-label">Failed run</span> <span class="muted">{failed}</span>
          </li>
          <li>
            <svg class="time-chart-swatch" width="22" height="12" aria-hidden="true">
              <path d="M11 1 L17 11 L5 11 Z" style={{ fill: 'var(--warn)', stroke: 'none' }} />
            </svg>
            <span class="time-chart-label">Degraded run</span> <span class="muted">{degraded}</span>
          </li>
        </>
      ) : null}
    </ul>
  );
}

/** The chart's data as a table, under a disclosure. */
function ChartTable({
  caption,
  times,
  series,
  format,
}: {
  caption: string;
  times: readonly number[];
  series: readonly ChartSeries[];
  format: (value: number) => string;
}) {
  return (
    <details class="time-chart-table">
      <summary>Show the data as a table</summary>
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">{caption}</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              {series.map((s) => (
                <th scope="col" class="num" key={s.label}>
                  {s.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {times.map((t, row) => (
              <tr key={t}>
                <th scope="row">{formatDateTime(t)}</th>
                {series.map((s) => {
                  const v = s.values[row];
                  return (
                    <td class="num" key={s.label}>
                      {v === null || v === undefined ? '—' : format(v)}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}
