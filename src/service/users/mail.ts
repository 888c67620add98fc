import type { FastifyBaseLogger } from 'fastify';
import { smtpTransports } from '../alerting/index.js';

/** Where people's mail goes out: OUTPOST_SMTP_URL and OUTPOST_SMTP_FROM (docs/configuration.md). */
export type SmtpSettings = { url: string; from: string };

/** People's mail: one per request, unpooled (invitations and resets are rare). */
const transports = smtpTransports();

/** Closes the SMTP connections of people's mail. */
export function closeUserMailTransports(): void {
  transports.close();
}

/** One mail to a person: its subject and its text, which holds the link. */
export type UserMail = { to: string; subject: string; text: string };

/** The invitation mail: who invites to which account, and the link (valid 7 days, used once). */
export function invitationMail(to: string, accountName: string, link: string): UserMail {
  return {
    to,
    subject: `You are invited to ${accountName} on Outpost`,
    text: `You are invited to the account "${accountName}" on Outpost.\n\nChoose your name and password here (the link works once, for 7 days):\n\n${link}\n\nIf you did not expect this, ignore this mail.\n`,
  };
}

/** The password-reset mail: the link (valid 1 hour, used once). */
export function resetMail(to: string, link: string): UserMail {
  return {
    to,
    subject: 'Reset your Outpost password',
    text: `Someone asked to reset the password of ${to} on Outpost.\n\nChoose a new password here (the link works once, for 1 hour):\n\n${link}\n\nIf it was not you, ignore this mail: your password stays as it is.\n`,
  };
}

/**
 * Sends `mail` through `smtp`. Never throws: a failure is logged (without the mail's text, which holds a
 * token) and answered false.
 */
export async function sendUserMail(
  smtp: SmtpSettings,
  mail: UserMail,
  log: FastifyBaseLogger,
): Promise<boolean> {
  try {
    await transports
      .get(smtp.url)
      .sendMail({ from: smtp.from, to: mail.to, subject: mail.subject, text: mail.text });
    return true;
  } catch (err) {
    log.warn(
      { smtpError: err instanceof Error ? err.message : String(err) },
      'could not send a mail to a person',
    );
    return false;
  }
}
