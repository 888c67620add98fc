/**
 * The forms of private locations: creating one, and renaming one (name and icon).
 */
import { useState } from 'preact/hooks';
import { createPrivateLocation, updatePrivateLocation } from '../api/locations.js';
import { FormError, TextField } from '../ui/forms.js';
import type { PrivateLocation } from '../api/schemas.js';
import { errorOf, FormButtons, formLevelError, slugOf } from '../ui/widgets.js';
import { IconField } from './shared.js';

/** New private location: name, slug (from the name until edited) and icon. */
export function CreateLocationForm({
  onCreated,
  onCancel,
}: {
  onCreated: (location: PrivateLocation) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [slugEdited, setSlugEdited] = useState(false);
  const [icon, setIcon] = useState('location');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = {
        name: name.trim(),
        slugName: slug.trim(),
        ...(icon.trim() ? { icon: icon.trim() } : {}),
      };
      onCreated(await createPrivateLocation(body));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="card misc-form" onSubmit={submit} noValidate aria-labelledby="pl-new">
      <h2 id="pl-new">New private location</h2>
      <TextField
        label="Name"
        error={errorOf(error, 'name')}
        required
        maxLength={255}
        value={name}
        onValue={(value) => {
          setName(value);
          if (!slugEdited) setSlug(slugOf(value));
        }}
      />
      <TextField
        label="Slug"
        hint="Checks name the location by it in privateLocations: lower-case letters, digits and hyphens, unique in the account. It cannot change later."
        error={errorOf(error, 'slugName')}
        required
        maxLength={63}
        spellcheck={false}
        value={slug}
        onValue={(value) => {
          setSlug(value);
          setSlugEdited(true);
        }}
      />
      <IconField value={icon} onValue={setIcon} error={errorOf(error, 'icon')} />
      <FormError error={formLevelError(error, ['name', 'slugName', 'icon'])} />
      <FormButtons label="Create private location" busyLabel="Creating…" busy={busy} onCancel={onCancel} />
    </form>
  );
}

/** A location's name and icon, saved in place. */
export function RenameForm({ location, onSaved }: { location: PrivateLocation; onSaved: () => void }) {
  const [name, setName] = useState(location.name);
  const [icon, setIcon] = useState(location.icon);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      await updatePrivateLocation(location.id, { name: name.trim(), icon: icon.trim() });
      setSaved(true);
      onSaved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="card misc-form pl-rename" onSubmit={submit} noValidate aria-labelledby="pl-rename">
      <h2 id="pl-rename">Name and icon</h2>
      <TextField
        label="Name"
        error={errorOf(error, 'name')}
        required
        maxLength={255}
        value={name}
        onValue={setName}
      />
      <IconField value={icon} onValue={setIcon} error={errorOf(error, 'icon')} />
      <FormError error={formLevelError(error, ['name', 'icon'])} />
      <FormButtons label="Save" busy={busy} status={saved ? 'Saved.' : ''} />
    </form>
  );
}
