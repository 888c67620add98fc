/**
 * gRPC monitors: where to connect, what to call (a method with a message, or the health check) and the
 * assertions.
 */
import { GRPC_MODES } from '../../../../../src/protocol/enums.js';
import { KeyValueRows } from '../controls/rows.js';
import { Checkbox, type FormApi, NumberInput, SelectInput, TextArea, TextInput } from '../controls/inputs.js';
import { Assertions, ipFamily } from './network.js';

/** The fields only one mode takes (docs/checks.md, "gRPC"): the other mode's are cleared when it is chosen. */
const BEHAVIOR_FIELDS = ['method', 'serviceDefinition', 'protoContent', 'message'] as const;

const MODE_LABELS: Record<(typeof GRPC_MODES)[number], string> = {
  BEHAVIOR: 'Call a method',
  HEALTH: 'Health check (grpc.health.v1)',
};

/** A gRPC monitor's request. */
export function GrpcSection({ fx }: { fx: FormApi }) {
  const mode = fx.get('request.grpcConfig.mode') === 'HEALTH' ? 'HEALTH' : 'BEHAVIOR';
  const choose = (value: string) => {
    fx.set('request.grpcConfig.mode', value);
    if (value === 'HEALTH') for (const name of BEHAVIOR_FIELDS) fx.set(`request.grpcConfig.${name}`, '');
    else fx.set('request.grpcConfig.service', '');
  };
  return (
    <>
      <fieldset>
        <legend>Connection</legend>
        <div class="field-pair field-pair-trail">
          <TextInput
            fx={fx}
            path="request.url"
            label="Host"
            hint="A name or an IP address, without scheme or port."
            required
            mono
          />
          <NumberInput fx={fx} path="request.port" label="Port" min={1} max={65535} required />
        </div>
        <div class="check-row">
          <Checkbox fx={fx} path="request.grpcConfig.tls" label="TLS" hint="Off: plaintext HTTP/2 (h2c)." />
          <Checkbox
            fx={fx}
            path="request.skipSSL"
            label="Skip TLS certificate checks"
            hint="On: an invalid certificate does not fail the run."
          />
        </div>
        <div class="field-pair">
          {ipFamily(fx)}
          <NumberInput
            fx={fx}
            path="request.timeout"
            label="Timeout (seconds)"
            hint="For the whole run: connecting, reflection and the call. 1–30."
            min={1}
            max={30}
          />
        </div>
      </fieldset>
      <fieldset>
        <legend>Call</legend>
        <SelectInput
          fx={fx}
          path="request.grpcConfig.mode"
          label="Mode"
          options={GRPC_MODES.map((m) => ({ value: m, label: MODE_LABELS[m] }))}
          onChoose={choose}
        />
        {mode === 'HEALTH' ? (
          <TextInput
            fx={fx}
            path="request.grpcConfig.service"
            label="Service"
            hint="The service to ask about, e.g. package.Service; empty asks about the whole server."
            mono
          />
        ) : (
          <>
            <TextInput
              fx={fx}
              path="request.grpcConfig.method"
              label="Method"
              hint="/package.Service/Method, or the method's name with a service below."
              required
              mono
            />
            <TextInput
              fx={fx}
              path="request.grpcConfig.serviceDefinition"
              label="Service"
              hint="Optional: package.Service, when the method above is named alone."
              mono
            />
            <TextArea
              fx={fx}
              path="request.grpcConfig.message"
              label="Request message (JSON)"
              hint="A JSON object; {{VARIABLES}} are filled in. Empty sends {}."
              rows={4}
            />
            <TextArea
              fx={fx}
              path="request.grpcConfig.protoContent"
              label="Proto definition"
              hint="The .proto text defining the service (at most 256 KiB). Empty: the agent asks the server's reflection."
              rows={8}
            />
          </>
        )}
      </fieldset>
      <KeyValueRows
        fx={fx}
        path="request.grpcConfig.metadata"
        noun="header"
        legend="Metadata"
        hint="Metadata sent with the call, as HTTP/2 headers; names ending -bin take base64 values."
      />
      <Assertions fx={fx} />
    </>
  );
}
