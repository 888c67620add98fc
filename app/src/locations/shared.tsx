/**
 * What the private-location pages share: how often they poll, the agent command and the icon field.
 */
import { TextField } from '../ui/forms.js';

/** How often the pages look again at locations and agents (last seen, connected), ms. */
export const POLL_MS = 15_000;
/** The command that starts an agent for a location, with the key in it. */
export function AgentCommand({ rawKey }: { rawKey: string }) {
  return (
    <>
      <p>Start an agent on your network with it:</p>
      <pre class="pl-command">
        <code>{`API_KEY=${rawKey} \\\nSERVICE_URL=${window.location.origin} \\\nnpx outpost agent`}</code>
      </pre>
    </>
  );
}

/** The icon field of the create and rename forms. */
export function IconField({
  value,
  onValue,
  error,
}: {
  value: string;
  onValue: (value: string) => void;
  error: string | undefined;
}) {
  return (
    <TextField
      label="Icon"
      hint="An icon name: lower-case letters, digits and hyphens."
      error={error}
      class="misc-narrow"
      maxLength={64}
      spellcheck={false}
      value={value}
      onValue={onValue}
    />
  );
}
