/** Secrets masked in pixels: inputs that receive one are drawn as dots and masked in screenshots. */
import type { Any } from './state.js';

/** Locators that received a secret, per page: masked in every screenshot the runner takes. */
const secretLocators: Any[] = [];
/** The run's secret values (RunnerPayload.secrets). */
let secrets: string[] = [];

/** Sets the run's secret values (non-empty strings). */
export function setMaskedSecrets(values: string[]): void {
  secrets = values;
}

const holdsSecret = (value: unknown) =>
  typeof value === 'string' && secrets.some((secret) => secret !== '' && value.includes(secret));

/** Shows `target`'s text as discs (`-webkit-text-security`), waiting at most 1 s for it. */
async function hideText(target: Any): Promise<void> {
  try {
    // Locator.evaluate takes the timeout; ElementHandle.evaluate ignores it and does not wait.
    await target.evaluate(
      (el: Any) => el?.style?.setProperty('-webkit-text-security', 'disc', 'important'),
      undefined,
      { timeout: 1_000 },
    );
  } catch {
    // No such element (yet), or a detached one: nothing on screen to hide now.
  }
}

/**
 * Wraps the typing methods of Playwright's client classes so that an input about to receive a
 * secret gets `-webkit-text-security: disc` (screenshots, screencast frames and video show dots)
 * and joins the masks of the runner's screenshots.
 *
 * @param client the client classes (Page, Frame, Locator, ElementHandle, Keyboard) by name.
 */
export function installSecretMasking(client: Record<string, Any>): void {
  const wrap = (proto: Any, name: string, target: (self: Any, args: unknown[]) => Any, valueAt: number) => {
    const original = proto?.[name];
    if (typeof original !== 'function') return;
    proto[name] = async function (this: Any, ...args: unknown[]) {
      if (holdsSecret(args[valueAt])) {
        const locator = target(this, args);
        if (locator) {
          if (typeof locator.page === 'function') secretLocators.push(locator);
          await hideText(locator);
        }
      }
      return original.apply(this, args);
    };
  };
  const { Page, Frame, Locator, ElementHandle, Keyboard } = client;
  for (const name of ['fill', 'type']) {
    wrap(Page?.prototype, name, (self, args) => self.locator(args[0]), 1);
    wrap(Frame?.prototype, name, (self, args) => self.locator(args[0]), 1);
    wrap(Locator?.prototype, name, (self) => self, 0);
    wrap(ElementHandle?.prototype, name, (self) => self, 0);
  }
  wrap(Locator?.prototype, 'pressSequentially', (self) => self, 0);
  const active = (self: Any) => {
    const page = self._page;
    return page ? page.locator('*:focus') : null;
  };
  wrap(Keyboard?.prototype, 'type', active, 0);
  wrap(Keyboard?.prototype, 'insertText', active, 0);
}

/** The locators of `page` that received a secret: the `mask` of its screenshots. */
export function masksFor(page: Any): Any[] {
  return secretLocators.filter((locator) => {
    try {
      return locator.page() === page;
    } catch {
      return false;
    }
  });
}
