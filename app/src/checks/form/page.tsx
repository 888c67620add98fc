/**
 * Creating and editing checks of every type: `/checks/new` (a type picker), `/checks/new?type=API` and
 * `/checks/{checkId}/edit`.
 */
import { useLocation } from 'preact-iso';
import { getCheck } from '../../api/checks.js';
import { ErrorNotice, Loading } from '../../ui/page.js';
import { type CreatableType, TYPE_INFO, typeFromQuery } from './model/types.js';
import { useLoad, useTitle } from '../../ui/hooks.js';
import './form.css';
import { FormFrame, TypePicker } from './frame.js';
import { loadReferences } from './references.js';
import { CheckForm } from './check-form.js';
import { editableFields } from './model/fields.js';
import { newCheckBody } from './model/new-check.js';
import { defaultLocations } from './model/locations.js';
import { RequirePermission, useCan } from '../../ui/permissions.js';

/**
 * The page: the type picker, a new check's form, or an existing check's; for a session that may not change
 * checks, the role's notice instead (nothing of the form is loaded).
 */
export default function CheckFormPage({ checkId }: { checkId?: string }) {
  const { query } = useLocation();
  if (!useCan('write')) return <NotAllowed checkId={checkId} />;
  if (checkId) return <EditCheck checkId={checkId} />;
  if (query.type === undefined) return <TypePicker />;
  const type = typeFromQuery(query.type);
  if (!type) return <TypePicker unknown={query.type} />;
  return <NewCheck key={type} type={type} />;
}

/** A new or edit page opened by a session that may not change checks: what to do instead. */
function NotAllowed({ checkId }: { checkId: string | undefined }) {
  const title = checkId ? 'Edit check' : 'New check';
  useTitle(title);
  return (
    <RequirePermission
      permission="write"
      title={title}
      back={
        checkId
          ? { href: `/checks/${encodeURIComponent(checkId)}`, label: 'Back to the check' }
          : { href: '/checks', label: 'Back to the checks' }
      }
    >
      {null}
    </RequirePermission>
  );
}

/** `/checks/new?type=…`: a new check of `type`, its fields at the service's defaults. */
function NewCheck({ type }: { type: CreatableType }) {
  const label = TYPE_INFO[type].noun;
  useTitle(`New ${label}`);
  const refs = useLoad((signal) => loadReferences(type, signal), [type]);
  if (!refs.data) {
    return (
      <FormFrame title={`New ${label}`} crumb={`New ${label}`}>
        {refs.error ? <ErrorNotice error={refs.error} /> : <Loading what="Loading the form" />}
      </FormFrame>
    );
  }
  const initial = newCheckBody(type);
  // Runs where an agent is: this machine's location (`local`) when `outpost up` runs one.
  Object.assign(initial, defaultLocations(refs.data.privateLocations, refs.data.agents));
  // Subscribed to every channel, as the API's own default (autoAssignAlerts) would: shown, so it can change.
  if (refs.data.alertChannels) {
    initial.alertChannelSubscriptions = refs.data.alertChannels.map((c) => ({
      alertChannelId: c.id,
      activated: true,
    }));
  }
  return (
    <FormFrame title={`New ${label}`} crumb={`New ${label}`}>
      <CheckForm type={type} initial={initial} refs={refs.data} />
    </FormFrame>
  );
}

/** `/checks/{checkId}/edit`: the stored check in the form. */
function EditCheck({ checkId }: { checkId: string }) {
  const loaded = useLoad(
    async (signal) => {
      const check = await getCheck(checkId, signal);
      return { check, refs: await loadReferences(check.checkType, signal) };
    },
    [checkId],
  );
  const name = loaded.data?.check.name;
  useTitle(name ? `Edit ${name}` : 'Edit check');
  if (!loaded.data) {
    return (
      <FormFrame title="Edit check" crumb="Edit">
        {loaded.error ? <ErrorNotice error={loaded.error} /> : <Loading what="Loading the check" />}
      </FormFrame>
    );
  }
  const { check, refs } = loaded.data;
  return (
    <FormFrame title={`Edit ${check.name}`} crumb="Edit" check={check}>
      <CheckForm
        key={check.id}
        type={check.checkType}
        initial={editableFields(check)}
        refs={refs}
        checkId={check.id}
        pingUrl={check.pingUrl}
      />
    </FormFrame>
  );
}
