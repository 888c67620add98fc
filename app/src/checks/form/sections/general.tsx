/**
 * The check's name, description, tags and switches; and the reference data every section offers choices
 * from.
 */
import type {
  Agent,
  AlertChannel,
  CheckGroup,
  PrivateLocation,
  Runtime,
  ServiceView,
  Snippet,
} from '../../../api/schemas.js';
import { TextField } from '../../../ui/forms.js';
import { Checkbox, type FormApi, type Option, TextArea, TextInput } from '../controls/inputs.js';

/** Reference data the form offers choices from; a list that could not be loaded is undefined. */
export type References = {
  groups?: CheckGroup[];
  privateLocations?: PrivateLocation[];
  runtimes?: Runtime[];
  alertChannels?: AlertChannel[];
  snippets?: Snippet[];
  /** Status-page services, for the incident trigger. */
  services?: ServiceView[];
  /** The account's agents, for the data-center locations they serve. */
  agents?: Agent[];
};

/** Turns a list of values into select options whose label is the value itself. */
export const options = (values: readonly string[]): Option[] => values.map((v) => ({ value: v, label: v }));

/** Parses a select's value as an integer id, '' as null. */
export const idOrNull = (value: string): number | null => (value === '' ? null : Number(value));

/** The check's name, description and switches. */
export function GeneralSection({
  fx,
  tagsText,
  onTags,
}: {
  fx: FormApi;
  tagsText: string;
  onTags: (t: string) => void;
}) {
  const scheduled = fx.type !== 'HEARTBEAT';
  return (
    <fieldset>
      <legend>General</legend>
      <TextInput fx={fx} path="name" label="Name" required />
      <TextArea
        fx={fx}
        path="description"
        label="Description"
        hint="Optional, at most 500 characters."
        rows={2}
        nullable
      />
      <TagsInput fx={fx} text={tagsText} onText={onTags} />
      <div class="check-row">
        <Checkbox
          fx={fx}
          path="activated"
          label="Activated"
          hint={
            scheduled
              ? 'Off: the check is not scheduled (it can still be run by hand).'
              : 'Off: late pings raise no alert.'
          }
        />
        <Checkbox fx={fx} path="muted" label="Muted" hint="No notifications are sent for it." />
        {scheduled ? (
          <Checkbox
            fx={fx}
            path="shouldFail"
            label="Should fail"
            hint="A failing run passes and a passing one fails (e.g. a port that must stay closed)."
          />
        ) : null}
      </div>
    </fieldset>
  );
}

/** Tags as one comma-separated input; the form turns the text into `tags` when it is sent. */
function TagsInput({ fx, text, onText }: { fx: FormApi; text: string; onText: (t: string) => void }) {
  const error = fx.error('tags');
  return (
    <TextField
      label="Tags"
      error={error}
      hint={
        <>
          Comma-separated, e.g. <code>production, api</code>: for filtering and for running checks by tag.
        </>
      }
      value={text}
      autoComplete="off"
      onValue={onText}
    />
  );
}
