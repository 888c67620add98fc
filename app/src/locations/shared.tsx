/**
 * What the private-location pages share: how often they poll, the agent command and the icon field.
 */
import { TextField } from '../ui/forms.js';

/** How often the pages look again at locations and agents (last seen, connected), ms. */
export const POLL_MS = 15_000;
/** Capabilities the agent image needs to run user code under uids of its own (docs/security.md). */
const AGENT_CAPABILITIES = ['SETUID', 'SETGID', 'KILL', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER'];

/** Whether `hostname` names this machine only (another machine cannot reach the service there). */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || hostname.startsWith('127.');
}

/**
 * The two commands that start an agent for a location on another machine: with the agent image (`docker
 * run`, least privilege) and with Node from a checkout (`npx outpost agent`, health port 8082 so it does not
 * collide with `outpost up`'s own agent on 8081). `serviceUrl` is this app's address; a loopback one gets a
 * warning, since another machine cannot reach it.
 */
export function agentCommands(rawKey: string, serviceUrl: string): { docker: string; node: string } {
  const caps = AGENT_CAPABILITIES.map((c) => `--cap-add ${c}`).join(' ');
  return {
    docker: [
      'docker run -d --name outpost-agent --restart unless-stopped \\',
      `  --cap-drop ALL ${caps} \\`,
      `  -e API_KEY=${rawKey} \\`,
      `  -e SERVICE_URL=${serviceUrl} \\`,
      '  outpost-agent:latest',
    ].join('\n'),
    node: `API_KEY=${rawKey} \\\nSERVICE_URL=${serviceUrl} \\\nAGENT_HEALTH_PORT=8082 \\\nnpx outpost agent`,
  };
}

/** The commands that start an agent for a location, with the key in them (or a placeholder). */
export function AgentCommand({ rawKey = '<a key of this location>' }: { rawKey?: string }) {
  const origin = window.location.origin;
  const commands = agentCommands(rawKey, origin);
  return (
    <>
      <p>
        Start an agent on a machine of your network with the agent image (built by{' '}
        <code>docker build -t outpost-agent .</code> in a checkout):
      </p>
      <pre class="pl-command">
        <code>{commands.docker}</code>
      </pre>
      <p>or with Node 20 or later, from a checkout:</p>
      <pre class="pl-command">
        <code>{commands.node}</code>
      </pre>
      {isLoopbackHost(window.location.hostname) ? (
        <p class="notice">
          <code>{origin}</code> is this machine's own address: another machine cannot reach it. Start the
          service with <code>HOST=0.0.0.0</code> and use this machine's name or address in{' '}
          <code>SERVICE_URL</code>.
        </p>
      ) : null}
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
