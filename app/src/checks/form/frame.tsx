/**
 * What surrounds the check form: the type picker, breadcrumbs and heading, and the page after creating a
 * heartbeat monitor.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { SavedCheck } from '../../api/checks.js';
import { PageHeader } from '../../ui/page.js';
import { CREATABLE_TYPES, TYPE_INFO } from './model/types.js';
import { useTitle } from '../../ui/hooks.js';
import type { Check } from '../../api/schemas.js';
import { PingUrl } from './sections/heartbeat.js';

/** `/checks/new`: which type of check to create. */
export function TypePicker({ unknown }: { unknown?: string }) {
  useTitle('New check');
  return (
    <section class="check-form-page">
      <nav class="breadcrumbs" aria-label="Breadcrumbs">
        <a href="/checks">Checks</a> <span aria-hidden="true">›</span> New check
      </nav>
      <PageHeader title="New check" />
      {unknown !== undefined ? (
        <div class="notice notice-error" role="alert">
          There is no check type “{unknown}”. Choose one of these.
        </div>
      ) : null}
      <p class="muted">What should the check test?</p>
      <ul class="type-picker">
        {CREATABLE_TYPES.map((t) => (
          <li key={t}>
            <a class="card type-card" href={`/checks/new?type=${t}`}>
              <span class="type-card-title">{TYPE_INFO[t].label}</span>
              <span class="type-card-summary">{TYPE_INFO[t].summary}</span>
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Breadcrumbs and the page's heading around the form. */
export function FormFrame({
  title,
  crumb,
  check,
  children,
}: {
  title: string;
  crumb: string;
  check?: Check;
  children: ComponentChildren;
}) {
  return (
    <section class="check-form-page">
      <nav class="breadcrumbs" aria-label="Breadcrumbs">
        <a href="/checks">Checks</a> <span aria-hidden="true">›</span>{' '}
        {check ? (
          <>
            <a href={`/checks/${encodeURIComponent(check.id)}`}>{check.name}</a>{' '}
            <span aria-hidden="true">›</span>{' '}
          </>
        ) : (
          <>
            <a href="/checks/new">New check</a> <span aria-hidden="true">›</span>{' '}
          </>
        )}
        {crumb}
      </nav>
      <PageHeader title={title} />
      {children}
    </section>
  );
}

/** After creating a heartbeat monitor: its ping URL, to copy into the job, and the way on. */
export function HeartbeatCreated({ check }: { check: SavedCheck }) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => headingRef.current?.focus(), []);
  return (
    <div class="card heartbeat-created">
      <h2 ref={headingRef} tabIndex={-1}>
        <span aria-hidden="true">✓ </span>
        Heartbeat monitor “{check.name}” created
      </h2>
      <p>Make your job ping this URL each time it runs. Until the first ping, the monitor waits.</p>
      <PingUrl url={check.pingUrl ?? ''} />
      <p class="form-actions">
        <a class="button" href={`/checks/${encodeURIComponent(check.id)}`}>
          Open the monitor
        </a>
        <a class="button button-secondary" href="/checks">
          Back to the checks
        </a>
      </p>
    </div>
  );
}
