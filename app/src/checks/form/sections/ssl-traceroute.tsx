/**
 * SSL and TRACEROUTE monitors: their request and assertions (docs/checks.md, "SSL" and "TRACEROUTE").
 */
import { TRACEROUTE_PROTOCOLS } from '../../../../../src/protocol/enums.js';
import { Checkbox, type FormApi, NumberInput, SelectInput, TextInput } from '../controls/inputs.js';
import { AssertionRows } from '../controls/rows.js';
import { assertionSourcesOf } from '../model/types.js';
import { options } from './general.js';
import { ipFamily } from './network.js';

/** What each type's assertions judge (docs/checks.md). */
const HINTS = {
  SSL: 'CERTIFICATE with Property daysUntilExpiry, issuerCN, subjectCN, keySizeBits, …; CONNECTION with Property tlsVersion (e.g. TLS1.3), chainTrusted, hostnameVerified, cipherSuite; JSON_RESPONSE a JSONPath such as $.chain[0].issuerCN; TEXT_RESPONSE a regex in Property; RESPONSE_TIME the handshake in ms.',
  TRACEROUTE:
    'RESPONSE_TIME with Property avg, min, max or stdDev of the final hop (ms); HOP_COUNT; PACKET_LOSS at the last hop (%); JSON_RESPONSE a JSONPath such as $.hops[0].main_ip.',
} as const;

/** An SSL monitor's connection, its expiry warning and assertions. */
export function SslSection({ fx }: { fx: FormApi }) {
  return (
    <>
      <fieldset>
        <legend>Certificate</legend>
        <div class="field-pair field-pair-trail">
          <TextInput
            fx={fx}
            path="request.sslConfig.hostname"
            label="Hostname"
            hint="A name or an IP address, without scheme or port."
            required
            mono
          />
          <NumberInput fx={fx} path="request.sslConfig.port" label="Port" min={1} max={65535} />
        </div>
        <TextInput
          fx={fx}
          path="request.sslConfig.serverName"
          label="Server name (SNI)"
          hint="The name sent in the handshake and checked in the certificate; empty: the hostname."
          nullable
          mono
        />
        <div class="field-pair">
          <NumberInput
            fx={fx}
            path="request.sslConfig.alertDaysBeforeExpiry"
            label="Degraded within (days of expiry)"
            hint="0 turns it off."
            min={0}
            max={365}
          />
          <NumberInput
            fx={fx}
            path="request.sslConfig.handshakeTimeoutMs"
            label="Handshake timeout (ms)"
            min={1000}
            max={30_000}
          />
        </div>
        <SelectInput
          fx={fx}
          path="request.sslConfig.ipFamily"
          label="IP family"
          options={options(['IPv4', 'IPv6'] as const)}
        />
        <Checkbox
          fx={fx}
          path="request.sslConfig.skipChainValidation"
          label="Skip chain validation"
          hint="On: a chain no trusted CA signed does not fail the run (expiry and the name still do)."
        />
      </fieldset>
      <AssertionRows
        fx={fx}
        path="request.assertions"
        sources={assertionSourcesOf(fx.type)}
        hint={HINTS.SSL}
      />
    </>
  );
}

/** A traceroute monitor's target, probes and limits, and assertions. */
export function TracerouteSection({ fx }: { fx: FormApi }) {
  const udp = fx.get('request.protocol') === 'UDP';
  return (
    <>
      <fieldset>
        <legend>Route</legend>
        <TextInput
          fx={fx}
          path="request.url"
          label="Host"
          hint="A name or an IP address, without scheme, port or path."
          required
          mono
        />
        <div class="field-pair">
          <SelectInput
            fx={fx}
            path="request.protocol"
            label="Probes"
            options={options(TRACEROUTE_PROTOCOLS)}
          />
          {udp ? (
            <NumberInput
              fx={fx}
              path="request.port"
              label="First UDP port"
              hint="Default 33434; each probe takes the next."
              min={1}
              max={65535}
              nullable
            />
          ) : null}
          {ipFamily(fx)}
        </div>
        <div class="field-pair">
          <NumberInput fx={fx} path="request.maxHops" label="Most hops" min={1} max={64} />
          <NumberInput
            fx={fx}
            path="request.maxUnknownHops"
            label="Stop after silent hops"
            min={1}
            max={30}
          />
          <NumberInput fx={fx} path="request.timeout" label="Timeout (s)" min={1} max={30} />
        </div>
        <Checkbox
          fx={fx}
          path="request.ptrLookup"
          label="Look up hop names (reverse DNS)"
          hint="Off: hops are shown by address only."
        />
      </fieldset>
      <AssertionRows
        fx={fx}
        path="request.assertions"
        sources={assertionSourcesOf(fx.type)}
        hint={HINTS.TRACEROUTE}
      />
    </>
  );
}
