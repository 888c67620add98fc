/**
 * The two fields of a new password (the password and its confirmation), with the checks the service would
 * make anyway (12 to 128 characters) and the one only a form can make (both the same), so a typo is caught
 * before the request. The values live in the form's state only, never in storage.
 */
import { PASSWORD_LENGTH } from '../api/session.js';
import { TextField } from './forms.js';

/** What {@link NewPasswordFields} holds: the password and its confirmation, as typed. */
export type NewPassword = { password: string; confirm: string };

/** Errors of a new password by field (`password`, `confirm`), empty when it may be sent. */
export function checkNewPassword({ password, confirm }: NewPassword): {
  password?: string;
  confirm?: string;
} {
  if (password.length < PASSWORD_LENGTH.min)
    return { password: `Use at least ${PASSWORD_LENGTH.min} characters.` };
  if (password.length > PASSWORD_LENGTH.max)
    return { password: `Use at most ${PASSWORD_LENGTH.max} characters.` };
  if (confirm !== password) return { confirm: 'The two passwords are not the same.' };
  return {};
}

/**
 * The new password and its confirmation (`autocomplete="new-password"`, so password managers offer to
 * generate and save one). `errors` are shown under their fields (from {@link checkNewPassword} or the API).
 */
export function NewPasswordFields({
  value,
  onValue,
  errors,
  label = 'New password',
}: {
  value: NewPassword;
  onValue: (value: NewPassword) => void;
  errors: { password?: string | undefined; confirm?: string | undefined };
  /** The first field's label; default "New password". */
  label?: string;
}) {
  return (
    <>
      <TextField
        label={label}
        type="password"
        name="new-password"
        autoComplete="new-password"
        hint={`${PASSWORD_LENGTH.min} to ${PASSWORD_LENGTH.max} characters. A passphrase of a few words is easy to type and hard to guess.`}
        error={errors.password}
        required
        maxLength={PASSWORD_LENGTH.max}
        value={value.password}
        onValue={(password) => onValue({ ...value, password })}
      />
      <TextField
        label="Confirm the password"
        type="password"
        name="confirm-password"
        autoComplete="new-password"
        error={errors.confirm}
        required
        maxLength={PASSWORD_LENGTH.max}
        value={value.confirm}
        onValue={(confirm) => onValue({ ...value, confirm })}
      />
    </>
  );
}
