import { artifactUrl } from '../api/check-results.js';
import type { CheckResult } from '../api/schemas.js';
import { formatBytes } from '../ui/format.js';
import { Heading, type HeadingLevel, ScrollRegion } from './text.js';

/** An artifact of a result as the API lists it: its file name and size (bytes). */
export type Artifact = CheckResult['artifacts'][number];

/** What an artifact is, told by its name (the agent names them: docs/checks.md, "Browser check results"). */
type ArtifactKind = 'trace' | 'screenshot' | 'video' | 'packet-capture' | 'report' | 'file';

const KIND_LABELS: Record<ArtifactKind, string> = {
  trace: 'Playwright trace',
  screenshot: 'Screenshot',
  video: 'Video',
  'packet-capture': 'Packet capture',
  report: 'Test report',
  file: 'File',
};

/**
 * The kind of an artifact by its name: `trace.zip` and `…-trace.zip` (Playwright traces), `.png` / `.jpg`
 * / `.jpeg` (screenshots), `.webm` (videos), `.pcap` / `.pcapng` (packet captures), `report.json`.
 */
function artifactKind(name: string): ArtifactKind {
  const lower = name.toLowerCase();
  if (/(^|[-_.])trace\.zip$/.test(lower)) return 'trace';
  if (/\.(png|jpe?g)$/.test(lower)) return 'screenshot';
  if (/\.webm$/.test(lower)) return 'video';
  if (/\.pcap(ng)?$/.test(lower)) return 'packet-capture';
  if (lower === 'report.json') return 'report';
  return 'file';
}

/** Words for an artifact kind. */
function artifactKindLabel(kind: ArtifactKind): string {
  return KIND_LABELS[kind];
}

/** The trace viewer the service serves, opening the trace at `traceUrl` (a same-origin path). */
function traceViewerUrl(traceUrl: string): string {
  return `/trace-viewer/index.html?trace=${encodeURIComponent(traceUrl)}`;
}

/**
 * A link opening a Playwright trace in the trace viewer, in a new tab. With several traces the name of
 * the trace follows the label, so each link says which one it opens.
 */
function TraceLink({ href, name, named }: { href: string; name: string; named: boolean }) {
  return (
    <a href={traceViewerUrl(href)} target="_blank" rel="noopener noreferrer" class="button button-secondary">
      Open trace in the trace viewer
      {named ? <span class="rv-mono"> ({name})</span> : null}
      <span class="visually-hidden"> (opens in a new tab)</span>
    </a>
  );
}

/**
 * The screenshots among a result's artifacts, inline (the `<img>` loads the artifact itself; its alt text
 * is the screenshot's name), and a link to each Playwright trace in the trace viewer. Nothing when the
 * result has neither.
 */
export function ScreenshotsAndTraces({
  artifacts,
  checkId,
  resultId,
  level,
}: {
  artifacts: readonly Artifact[];
  checkId: string;
  resultId: string;
  level: HeadingLevel;
}) {
  const traces = artifacts.filter((a) => artifactKind(a.name) === 'trace');
  const shots = artifacts.filter((a) => artifactKind(a.name) === 'screenshot');
  return (
    <>
      {traces.length > 0 ? (
        <section class="rv-part">
          <Heading level={level}>{traces.length === 1 ? 'Trace' : 'Traces'}</Heading>
          <p class="muted">
            The trace replays the run step by step: actions, network requests, console and page snapshots.
          </p>
          <ul class="rv-trace-links">
            {traces.map((t) => (
              <li key={t.name}>
                <TraceLink
                  href={artifactUrl(checkId, resultId, t.name)}
                  name={t.name}
                  named={traces.length > 1}
                />
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      {shots.length > 0 ? (
        <section class="rv-part">
          <Heading level={level}>{shots.length === 1 ? 'Screenshot' : 'Screenshots'}</Heading>
          <div class="rv-shots">
            {shots.map((s) => {
              const href = artifactUrl(checkId, resultId, s.name);
              return (
                <figure key={s.name} class="rv-shot">
                  <img src={href} alt={s.name} loading="lazy" decoding="async" />
                  <figcaption>
                    <a href={href} download={s.name} class="rv-mono rv-break">
                      {s.name}
                    </a>{' '}
                    <span class="muted">{formatBytes(s.sizeBytes)}</span>
                  </figcaption>
                </figure>
              );
            })}
          </div>
        </section>
      ) : null}
    </>
  );
}

/** Every artifact of a result as a download link, with its kind and size; traces open in the viewer too. */
export function ArtifactsTable({
  artifacts,
  checkId,
  resultId,
}: {
  artifacts: readonly Artifact[];
  checkId: string;
  resultId: string;
}) {
  const traces = artifacts.filter((a) => artifactKind(a.name) === 'trace').length;
  return (
    <ScrollRegion label="Artifacts of this result">
      <table>
        <caption class="visually-hidden">Artifacts of this result</caption>
        <thead>
          <tr>
            <th scope="col">File</th>
            <th scope="col">Kind</th>
            <th scope="col" class="num">
              Size
            </th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {artifacts.map((a) => {
            const href = artifactUrl(checkId, resultId, a.name);
            const kind = artifactKind(a.name);
            return (
              <tr key={a.name}>
                <th scope="row" class="rv-break">
                  <a href={href} download={a.name} class="rv-mono">
                    {a.name}
                  </a>
                </th>
                <td>{artifactKindLabel(kind)}</td>
                <td class="num">{formatBytes(a.sizeBytes)}</td>
                <td>
                  {kind === 'trace' ? <TraceLink href={href} name={a.name} named={traces > 1} /> : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
