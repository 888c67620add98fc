/**
 * Form-filling helpers of the web app's component tests: controls are found by their label, the way a
 * user (and a screen reader) finds them.
 */
import { fireEvent, screen, within } from '@testing-library/preact';

/** A control's label: its exact text, or a pattern (`/^Name/` leaves out a required marker or hint). */
export type Label = RegExp | string;

/** The input, text area or select labelled `label` in the document. */
export function field(label: Label): HTMLInputElement {
  return screen.getByLabelText(label) as HTMLInputElement;
}

/** Types `value` into the text control labelled `label` (replacing its text; one `input` event). */
export function type(label: Label, value: string): void {
  fireEvent.input(field(label), { target: { value } });
}

/**
 * Picks the option whose value is `value` in the select labelled `label` (one `change` event); inside
 * `container` when given, else anywhere in the document.
 */
export function choose(label: Label, value: string, container?: HTMLElement): void {
  const select = container ? within(container).getByLabelText(label) : field(label);
  fireEvent.change(select, { target: { value } });
}

/** The current text of the control labelled `label`. */
export function fieldValue(label: Label): string {
  return field(label).value;
}
