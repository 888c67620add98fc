/**
 * URL, TCP, DNS and ICMP monitors: their request and assertions.
 */
import { DNS_PROTOCOLS, DNS_RECORD_TYPES, IP_FAMILIES } from '../../../../../src/protocol/enums.js';
import { Checkbox, type FormApi, NumberInput, SelectInput, TextArea, TextInput } from '../controls/inputs.js';
import { assertionSourcesOf } from '../model/types.js';
import { AssertionRows } from '../controls/rows.js';
import { options } from './general.js';

/** The switches of an HTTP request (API checks, URL monitors): redirects, TLS checks, IP family. */
export function HttpSwitches({ fx }: { fx: FormApi }) {
  return (
    <>
      <div class="check-row">
        <Checkbox fx={fx} path="request.followRedirects" label="Follow redirects" />
        <Checkbox
          fx={fx}
          path="request.skipSSL"
          label="Skip TLS certificate checks"
          hint="On: an invalid certificate does not fail the run."
        />
      </div>
      {ipFamily(fx)}
    </>
  );
}

/** Renders the IP family select (`request.ipFamily`) of the form `fx`. */
export const ipFamily = (fx: FormApi) => (
  <SelectInput fx={fx} path="request.ipFamily" label="IP family" options={options(IP_FAMILIES)} />
);

/** What each type's assertions judge (docs/checks.md). */
const ASSERTION_HINTS: Partial<Record<string, string>> = {
  API: 'JSON_BODY: a JSONPath in Property; HEADERS: the header name in Property, an optional regex picks part of its value; TEXT_BODY: a regex whose first group is the actual value. Target is always text, e.g. 200.',
  URL: 'The status code, e.g. LESS_THAN 400.',
  TCP: 'RESPONSE_DATA: the reply as text; RESPONSE_TIME in ms.',
  GRPC: 'GRPC_STATUS: the status code (0 OK, 5 NOT_FOUND, 14 UNAVAILABLE); JSON_RESPONSE: a JSONPath over the response message, e.g. $.name; HEADERS: a response metadata key in Property; RESPONSE_TIME in ms.',
  DNS: 'RESPONSE_CODE (e.g. EQUALS NXDOMAIN: without one, any code but NOERROR fails), TEXT_ANSWER (a regex), JSON_ANSWER (a JSONPath), RESPONSE_TIME in ms.',
  ICMP: 'LATENCY with Property avg, min, max or stdDev (ms); JSON_RESPONSE with a JSONPath such as $.packetLoss.',
};

/** Renders the assertion rows of the form `fx` (`request.assertions`), with the sources and hint of its check type. */
export function Assertions({ fx }: { fx: FormApi }) {
  return (
    <AssertionRows
      fx={fx}
      path="request.assertions"
      sources={assertionSourcesOf(fx.type)}
      hint={ASSERTION_HINTS[fx.type]}
    />
  );
}

/** A URL monitor's request. */
export function UrlSection({ fx }: { fx: FormApi }) {
  return (
    <>
      <fieldset>
        <legend>Request</legend>
        <TextInput
          fx={fx}
          path="request.url"
          label="URL"
          hint="http:// or https://; fetched with GET."
          required
          mono
          inputMode="url"
        />
        <HttpSwitches fx={fx} />
      </fieldset>
      <Assertions fx={fx} />
    </>
  );
}

/** A TCP monitor's request. */
export function TcpSection({ fx }: { fx: FormApi }) {
  return (
    <>
      <fieldset>
        <legend>Connection</legend>
        <div class="field-pair field-pair-trail">
          <TextInput
            fx={fx}
            path="request.hostname"
            label="Hostname"
            hint="A name or an IP address, without scheme or port."
            required
            mono
          />
          <NumberInput fx={fx} path="request.port" label="Port" min={1} max={65535} required />
        </div>
        <TextArea
          fx={fx}
          path="request.data"
          label="Data to send"
          hint="Optional, sent after connecting; the reply is read then. At most 64 KiB."
          rows={4}
          nullable
        />
        {ipFamily(fx)}
      </fieldset>
      <Assertions fx={fx} />
    </>
  );
}

/** A DNS monitor's query. */
export function DnsSection({ fx }: { fx: FormApi }) {
  return (
    <>
      <fieldset>
        <legend>Query</legend>
        <div class="field-pair field-pair-trail">
          <TextInput
            fx={fx}
            path="request.query"
            label="Query"
            hint="The name to look up, e.g. example.com."
            required
            mono
          />
          <SelectInput
            fx={fx}
            path="request.recordType"
            label="Record type"
            options={options(DNS_RECORD_TYPES)}
          />
        </div>
        <div class="field-pair">
          <TextInput
            fx={fx}
            path="request.nameServer"
            label="Name server"
            hint="An address or host name; empty: the agent's first resolver."
            nullable
            mono
          />
          <NumberInput fx={fx} path="request.port" label="Port" hint="Default 53." min={1} max={65535} />
          <SelectInput fx={fx} path="request.protocol" label="Protocol" options={options(DNS_PROTOCOLS)} />
        </div>
      </fieldset>
      <Assertions fx={fx} />
    </>
  );
}

/** An ICMP monitor's ping and its packet loss limits. */
export function IcmpSection({ fx }: { fx: FormApi }) {
  return (
    <>
      <fieldset>
        <legend>Ping</legend>
        <div class="field-pair field-pair-trail">
          <TextInput
            fx={fx}
            path="request.hostname"
            label="Hostname"
            hint="A name or an IP address."
            required
            mono
          />
          <NumberInput
            fx={fx}
            path="request.pingCount"
            label="Ping count"
            hint="1 to 50, default 10."
            min={1}
            max={50}
          />
        </div>
        {ipFamily(fx)}
        <div class="field-pair">
          <NumberInput
            fx={fx}
            path="degradedPacketLossThreshold"
            label="Degraded at packet loss (%)"
            hint="Above 0, at most 100. Default 10."
            min={0}
            max={100}
            step="any"
            nullable
          />
          <NumberInput
            fx={fx}
            path="maxPacketLossThreshold"
            label="Failed at packet loss (%)"
            hint="At least the degraded one. Default 20."
            min={0}
            max={100}
            step="any"
            nullable
          />
        </div>
      </fieldset>
      <Assertions fx={fx} />
    </>
  );
}
