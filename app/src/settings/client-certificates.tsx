/**
 * Client certificates for mutual TLS (`/settings/client-certificates`, `/v1/client-certificates`): API checks
 * to a certificate's host present it. List, upload (host, certificate, private key, passphrase, CA; PEM
 * typed or read from a file), delete. The private key and passphrase go to the API in the upload only: no
 * answer holds them, and the page forgets them once sent.
 */
import { useState } from 'preact/hooks';
import {
  type ClientCertificateUpload,
  createClientCertificate,
  deleteClientCertificate,
  listClientCertificates,
} from '../api/client-certificates.js';
import { formatDateTime } from '../ui/format.js';
import { FormError, TextAreaField, TextField } from '../ui/forms.js';
import { useLoad, useTitle } from '../ui/hooks.js';
import { SettingsTop } from './page-top.js';
import { useCan } from '../ui/permissions.js';
import { ConfirmButton, errorOf, FormButtons, formLevelError, ListStatus, YesNo } from '../ui/widgets.js';

/** How many certificates a PEM bundle holds (its `BEGIN CERTIFICATE` lines). */
export function certificateCount(pem: string): number {
  return pem.match(/-----BEGIN CERTIFICATE-----/g)?.length ?? 0;
}

/** The upload body of the form's fields: the optional passphrase and CA left out when empty. */
export function uploadBody(fields: ClientCertificateUpload): ClientCertificateUpload {
  return {
    host: fields.host.trim().toLowerCase(),
    cert: fields.cert.trim(),
    key: fields.key.trim(),
    ...(fields.passphrase ? { passphrase: fields.passphrase } : {}),
    ...(fields.ca?.trim() ? { ca: fields.ca.trim() } : {}),
  };
}

/** The client certificates page: the list and the upload form. */
export function ClientCertificatesPage() {
  useTitle('Client certificates · Settings');
  const certificates = useLoad((signal) => listClientCertificates(signal), []);
  const [uploading, setUploading] = useState(false);
  const [status, setStatus] = useState('');
  const canWrite = useCan('write');

  return (
    <>
      <SettingsTop
        title="Client certificates"
        formOpen={uploading}
        newLabel="Upload a certificate"
        onToggle={() => {
          setStatus('');
          setUploading(!uploading);
        }}
        status={status}
      >
        API checks to a certificate's host present it (mutual TLS). To replace one, upload the new certificate
        for the same host (the newest wins) and delete the old. Private keys are stored encrypted and never
        shown again.
      </SettingsTop>
      {uploading && canWrite ? (
        <UploadForm
          onSaved={(host) => {
            setUploading(false);
            setStatus(`Uploaded the certificate for ${host}.`);
            certificates.reload();
          }}
          onCancel={() => setUploading(false)}
        />
      ) : null}
      <ListStatus
        load={certificates}
        loading="Loading client certificates"
        isEmpty={certificates.data?.length === 0}
      >
        No client certificate yet.
        {canWrite ? (
          <>
            {' '}
            Upload one with <strong>Upload a certificate</strong>.
          </>
        ) : null}
      </ListStatus>
      {certificates.data && certificates.data.length > 0 ? (
        <div class="table-wrap">
          <table class="misc-table st-table">
            <caption class="visually-hidden">Client certificates</caption>
            <thead>
              <tr>
                <th scope="col">Host</th>
                <th scope="col" class="num">
                  Certificates
                </th>
                <th scope="col">CA bundle</th>
                <th scope="col">Uploaded</th>
                {canWrite ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {certificates.data.map((c) => (
                <tr key={c.id}>
                  <th scope="row">
                    <code>{c.host}</code>
                  </th>
                  <td class="num" data-label="Certificates">
                    {certificateCount(c.cert)}
                  </td>
                  <td data-label="CA bundle">
                    <YesNo value={c.ca !== null} yes="Yes" no="None" />
                  </td>
                  <td data-label="Uploaded">{formatDateTime(c.created_at)}</td>
                  {canWrite ? (
                    <td class="misc-actions-cell">
                      <ConfirmButton
                        small
                        label={
                          <>
                            Delete <span class="visually-hidden">the certificate for {c.host}</span>
                          </>
                        }
                        question={
                          <>
                            Delete the certificate for <code>{c.host}</code>? API checks to this host stop
                            presenting it.
                          </>
                        }
                        confirmLabel="Delete certificate"
                        onConfirm={async () => {
                          await deleteClientCertificate(c.id);
                          setStatus(`Deleted the certificate for ${c.host}.`);
                          certificates.reload();
                        }}
                      />
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

/** A file input that reads a PEM file into a text field (`onText`), for the field labelled `what`. */
function PemFile({ what, onText }: { what: string; onText: (text: string) => void }) {
  const [problem, setProblem] = useState('');
  return (
    <div class="st-file">
      <label>
        Read the {what} from a file{' '}
        <input
          type="file"
          accept=".pem,.crt,.cer,.key,text/plain,application/x-pem-file"
          onChange={async (e) => {
            const file = e.currentTarget.files?.[0];
            if (!file) return;
            if (file.size > 262_144) {
              setProblem(`${file.name} is larger than 256 KiB: not a PEM file.`);
              return;
            }
            setProblem('');
            onText(await file.text());
          }}
        />
      </label>
      {problem ? (
        <p class="field-error" role="alert">
          {problem}
        </p>
      ) : null}
    </div>
  );
}

/** The upload form: host, certificate, private key, passphrase and CA bundle. */
function UploadForm({ onSaved, onCancel }: { onSaved: (host: string) => void; onCancel: () => void }) {
  const [host, setHost] = useState('');
  const [cert, setCert] = useState('');
  const [key, setKey] = useState('');
  const [passphrase, setPassphrase] = useState('');
  const [ca, setCa] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const saved = await createClientCertificate(uploadBody({ host, cert, key, passphrase, ca }));
      // The key and passphrase leave the page's memory with the form.
      setKey('');
      setPassphrase('');
      onSaved(saved.host);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="card misc-form" onSubmit={submit} noValidate aria-labelledby="st-cert-new">
      <h2 id="st-cert-new">Upload a client certificate</h2>
      <TextField
        label="Host"
        hint="The host it is presented to, without scheme or port: api.example.com, or *.example.com."
        error={errorOf(error, 'host')}
        required
        maxLength={253}
        spellcheck={false}
        autoComplete="off"
        value={host}
        onValue={setHost}
      />
      <TextAreaField
        label="Certificate (PEM)"
        hint="The client certificate first; intermediates may follow."
        error={errorOf(error, 'cert')}
        required
        rows={5}
        class="st-code"
        spellcheck={false}
        value={cert}
        onValue={setCert}
      />
      <PemFile what="certificate" onText={setCert} />
      <TextAreaField
        label="Private key (PEM)"
        hint="Stored encrypted; never shown again."
        error={errorOf(error, 'key')}
        required
        rows={5}
        class="st-code"
        spellcheck={false}
        autoComplete="off"
        value={key}
        onValue={setKey}
      />
      <PemFile what="private key" onText={setKey} />
      <TextField
        label="Passphrase (optional)"
        hint="Only for an encrypted private key. Never shown again."
        error={errorOf(error, 'passphrase')}
        type="password"
        autoComplete="new-password"
        maxLength={1024}
        value={passphrase}
        onValue={setPassphrase}
      />
      <TextAreaField
        label="CA bundle (optional, PEM)"
        hint="The certificates that sign the server's certificate, when it is not signed by a public CA."
        error={errorOf(error, 'ca')}
        rows={4}
        class="st-code"
        spellcheck={false}
        value={ca}
        onValue={setCa}
      />
      <PemFile what="CA bundle" onText={setCa} />
      <FormError error={formLevelError(error, ['host', 'cert', 'key', 'passphrase', 'ca'])} />
      <FormButtons label="Upload certificate" busy={busy} onCancel={onCancel} />
    </form>
  );
}
