import { urlCredentialForms } from '../../../common/uri.js';
import { credentialTokens } from '../../../common/scrub.js';
import { mapSecrets } from '../../platform/store/secret-fields.js';
import { channelSecrets } from '../alert-channels/alert-channels.js';
import type { ProviderConfig } from '../types.js';

/**
 * The secret values of a channel document (with secrets in clear): its integration secrets, the
 * values of webhook credential headers and query parameters with their tokens (`Bearer x` → x),
 * and a Slack webhook URL (the URL is the credential).
 */
export function channelSecretValues(type: string, doc: Record<string, unknown>): string[] {
  const values: string[] = [];
  mapSecrets(doc, channelSecrets(type), (value, place) => {
    values.push(...(place.kind === 'pair' ? credentialTokens(value) : [value]));
    return value;
  });
  const config = doc.config as Record<string, unknown> | undefined;
  if (type === 'SLACK' && typeof config?.url === 'string') values.push(config.url);
  return values;
}

/** Credentials of the providers: the Twilio auth token and the SMTP URL's password and user (urlCredentialForms). */
export function providerSecrets(providers: ProviderConfig): string[] {
  const values: string[] = [];
  if (providers.twilio?.authToken) values.push(providers.twilio.authToken);
  if (providers.smtp?.url) {
    try {
      values.push(...urlCredentialForms(new URL(providers.smtp.url)));
    } catch {
      // Not a URL the sender could use either; nothing to scrub.
    }
  }
  return values;
}
