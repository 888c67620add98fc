import { formatMs } from './format.js';

/** Size of a {@link Sparkline}, CSS pixels. */
const WIDTH = 96;
const HEIGHT = 24;
/** Room kept at the top and bottom so the line's stroke is not clipped. */
const PAD = 2;

/** Min, average and max of the values that are not null; null when every value is null. */
export function summarize(
  values: readonly (number | null)[],
): { min: number; max: number; avg: number } | null {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  let sum = 0;
  let n = 0;
  for (const v of values) {
    if (v === null || !Number.isFinite(v)) continue;
    if (v < min) min = v;
    if (v > max) max = v;
    sum += v;
    n++;
  }
  return n === 0 ? null : { min, max, avg: sum / n };
}

/**
 * The `points` attributes of a sparkline: one polyline per run of consecutive values (a null, an hour
 * without runs, breaks the line rather than drawing a fall to zero). Exported for tests.
 */
function sparklinePolylines(values: readonly (number | null)[], width = WIDTH, height = HEIGHT): string[] {
  const stats = summarize(values);
  if (!stats) return [];
  const span = stats.max - stats.min || 1;
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  const lines: string[] = [];
  let current: string[] = [];
  values.forEach((v, i) => {
    if (v === null || !Number.isFinite(v)) {
      if (current.length) lines.push(current.join(' '));
      current = [];
      return;
    }
    const x = values.length > 1 ? i * step : width / 2;
    // A flat series sits in the middle; otherwise max at the top, min at the bottom.
    const y = stats.max === stats.min ? height / 2 : PAD + (1 - (v - stats.min) / span) * (height - 2 * PAD);
    current.push(`${Math.round(x * 10) / 10},${Math.round(y * 10) / 10}`);
  });
  if (current.length) lines.push(current.join(' '));
  return lines;
}

/**
 * A small response-time chart for a table row: plain inline SVG (no chart library, so a thousand rows
 * stay cheap), with its figures as the image's accessible name: "Response time, last 24 hours: min 12 ms,
 * avg 40 ms, max 340 ms". A lone point (a run of one value) is drawn as a dot.
 *
 * @param values response times in ms, oldest first; null where there was no run.
 * @param label what the values are, the start of the accessible name.
 */
export function Sparkline({
  values,
  label = 'Response time, last 24 hours',
}: {
  values: readonly (number | null)[];
  label?: string;
}) {
  const stats = summarize(values);
  if (!stats) {
    return <span class="sparkline-empty muted">no runs</span>;
  }
  const lines = sparklinePolylines(values);
  const name = `${label}: min ${formatMs(stats.min)}, avg ${formatMs(stats.avg)}, max ${formatMs(stats.max)}`;
  return (
    <svg
      class="sparkline"
      role="img"
      aria-label={name}
      width={WIDTH}
      height={HEIGHT}
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      preserveAspectRatio="none"
    >
      {lines.map((points) => {
        if (!points.includes(' ')) {
          const [x, y] = points.split(',');
          return <circle key={points} cx={x} cy={y} r="1.75" />;
        }
        return <polyline key={points} points={points} />;
      })}
    </svg>
  );
}
