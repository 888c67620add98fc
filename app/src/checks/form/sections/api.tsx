/**
 * An API check's request, setup and teardown, and variables.
 */
import { API_BODY_TYPES, API_METHODS } from '../../../../../src/protocol/enums.js';
import { type FormApi, type Option, SelectInput, TextArea, TextInput } from '../controls/inputs.js';
import { Assertions, HttpSwitches } from './network.js';
import { KeyValueRows } from '../controls/rows.js';
import { VariableRows } from '../controls/variable-rows.js';
import { RuntimeSelect } from './script.js';
import type { References } from './general.js';
import { options } from './general.js';
import { idOrNull } from './general.js';
import { isObject } from '../model/paths.js';

/** An API check's request, scripts and variables. */
export function ApiSection({ fx, refs }: { fx: FormApi; refs: References }) {
  return (
    <>
      <ApiRequest fx={fx} />
      <Assertions fx={fx} />
      <SetupAndTeardown fx={fx} refs={refs} />
      <VariableRows
        fx={fx}
        path="environmentVariables"
        hint="Used as {{NAME}} in the URL, headers, query parameters, body and basic auth; the check's win over its group's and the account's. A secret's value is never shown again."
      />
    </>
  );
}

/** The request: method, URL, query parameters, headers, body, basic authentication and HTTP switches. */
function ApiRequest({ fx }: { fx: FormApi }) {
  const bodyType = String(fx.get('request.bodyType') ?? 'NONE');
  return (
    <fieldset>
      <legend>Request</legend>
      <div class="field-pair field-pair-lead">
        <SelectInput fx={fx} path="request.method" label="Method" options={options(API_METHODS)} />
        <TextInput
          fx={fx}
          path="request.url"
          label="URL"
          hint="http:// or https://, or starting with a {{VARIABLE}} such as {{GROUP_BASE_URL}}/health."
          required
          mono
          inputMode="url"
        />
      </div>
      <KeyValueRows fx={fx} path="request.queryParameters" noun="query parameter" legend="Query parameters" />
      <KeyValueRows
        fx={fx}
        path="request.headers"
        noun="header"
        legend="Headers"
        hint="{{VARIABLES}} are replaced. A credential header (Authorization, Cookie, …) reads ***** once saved; leaving it so keeps it."
      />
      <SelectInput
        fx={fx}
        path="request.bodyType"
        label="Body type"
        options={API_BODY_TYPES.map((t) => ({ value: t, label: t === 'NONE' ? 'NONE (no body)' : t }))}
      />
      {bodyType === 'NONE' ? null : (
        <TextArea
          fx={fx}
          path="request.body"
          label="Body"
          hint="At most 128 KiB; {{VARIABLES}} are replaced."
          rows={8}
        />
      )}
      <BasicAuth fx={fx} />
      <HttpSwitches fx={fx} />
    </fieldset>
  );
}

/** Basic authentication: username and password, `null` when both are empty. */
function BasicAuth({ fx }: { fx: FormApi }) {
  const basicAuth = fx.get('request.basicAuth');
  const setAuth = (field: 'username' | 'password', value: string) => {
    const next = { username: '', password: '', ...(isObject(basicAuth) ? basicAuth : {}), [field]: value };
    fx.set('request.basicAuth', next.username === '' && next.password === '' ? null : next);
  };
  const authFx: FormApi = {
    ...fx,
    get: (path) => (isObject(basicAuth) ? basicAuth[path] : ''),
    set: (path, value) => setAuth(path as 'username' | 'password', String(value ?? '')),
    error: (path) =>
      fx.error(`request.basicAuth.${path}`, ...(path === 'username' ? ['request.basicAuth'] : [])),
  };
  return (
    <fieldset class="nested">
      <legend>Basic authentication</legend>
      <div class="field-pair">
        <TextInput fx={authFx} path="username" label="Username" />
        <TextInput fx={authFx} path="password" label="Password" type="password" autoComplete="new-password" />
      </div>
    </fieldset>
  );
}

/** The setup and teardown snippets and scripts, and the runtime. */
function SetupAndTeardown({ fx, refs }: { fx: FormApi; refs: References }) {
  const snippetOptions: Option[] = [
    { value: '', label: 'None' },
    ...(refs.snippets ?? []).map((s) => ({ value: String(s.id), label: s.name })),
  ];
  return (
    <fieldset>
      <legend>Setup and teardown</legend>
      <p class="field-hint">
        The setup script may change the request; the teardown script sees the response before the assertions.
        Each runs in a sandbox for at most 10 s. Use a snippet or a script of the check's own.
      </p>
      {refs.snippets ? (
        <div class="field-pair">
          <SelectInput
            fx={fx}
            path="setupSnippetId"
            label="Setup snippet"
            options={snippetOptions}
            parse={idOrNull}
          />
          <SelectInput
            fx={fx}
            path="tearDownSnippetId"
            label="Teardown snippet"
            options={snippetOptions}
            parse={idOrNull}
          />
        </div>
      ) : (
        <p class="notice">Snippets could not be loaded; the check keeps the ones it has.</p>
      )}
      <TextArea fx={fx} path="localSetupScript" label="Setup script" rows={6} nullable />
      <TextArea fx={fx} path="localTearDownScript" label="Teardown script" rows={6} nullable />
      <RuntimeSelect fx={fx} refs={refs} />
    </fieldset>
  );
}
