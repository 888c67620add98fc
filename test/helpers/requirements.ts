import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/common/paths.js';

/** True when `command` runs and exits 0. */
export function commandWorks(command: string, args: string[] = []): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/**
 * Decides whether a test needing a system package or capability can run.
 * Returns null when it can; otherwise the reason, to pass to `it.skipIf`/`describe.skipIf`
 * and print. Under CI=true a missing requirement throws instead: CI cannot hide a skip.
 */
export function missingRequirement(requirements: Requirement[]): string | null {
  const missing = requirements.filter((r) => !r.ok);
  if (missing.length === 0) return null;
  const reason = missing.map((r) => `${r.what} is missing (${r.install})`).join('; ');
  if (process.env.CI === 'true') {
    throw new Error(`CI=true and a test requirement is missing: ${reason}`);
  }
  console.warn(`skipping: ${reason}`);
  return reason;
}

/** True when the kernel has IPv6 on loopback (::1 configured). */
export function ipv6LoopbackWorks(): boolean {
  return commandWorks('ping', ['-6', '-c', '1', '-W', '1', '::1']);
}

/** True when this process may create network namespaces (root or CAP_SYS_ADMIN) and has ip + nft. */
export function netnsWorks(): boolean {
  const name = `outpost-probe-${process.pid}`;
  if (!commandWorks('ip', ['netns', 'add', name])) return false;
  commandWorks('ip', ['netns', 'del', name]);
  return commandWorks('nft', ['--version']);
}

/**
 * True when IPv6 on loopback is off, so an IPv6 test must skip (with a message).
 * Under CI=true it throws instead: CI always runs the IPv6 cases.
 */
export function ipv6Missing(): boolean {
  return (
    missingRequirement([
      {
        ok: ipv6LoopbackWorks(),
        what: 'IPv6 on loopback (::1)',
        install: 'sysctl -w net.ipv6.conf.lo.disable_ipv6=0',
      },
    ]) !== null
  );
}

/** A test requirement: whether it is met, what it is, and the command that installs it. */
export type Requirement = { ok: boolean; what: string; install: string };

/** Chromium of browser checks: CHROMIUM_PATH, default Debian's `/usr/bin/chromium`. */
export const CHROMIUM_PATH: string = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Chromium at CHROMIUM_PATH answering `--version`, with the Liberation fonts it renders pages with.
 * Pass to {@link missingRequirement}.
 */
export function chromiumRequirement(): Requirement {
  return {
    ok: commandWorks(CHROMIUM_PATH, ['--version']) && existsSync('/usr/share/fonts/truetype/liberation'),
    what: `chromium (${CHROMIUM_PATH}) with fonts-liberation`,
    install: 'apt-get install chromium fonts-liberation',
  };
}

/**
 * Runtime `runtimeId`'s dependencies installed under `runtimes/<runtimeId>/node_modules` (the root's
 * postinstall does it). Pass to {@link missingRequirement}.
 */
export function runtimeRequirement(runtimeId: string): Requirement {
  return {
    ok: existsSync(join(PACKAGE_ROOT, 'runtimes', runtimeId, 'node_modules', '.package-lock.json')),
    what: `runtime ${runtimeId}'s dependencies`,
    install: `PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix runtimes/${runtimeId} --ignore-scripts`,
  };
}

/** Tesseract OCR (`tesseract <image> stdout`), to read text off screenshots. Pass to {@link missingRequirement}. */
export function tesseractRequirement(): Requirement {
  return {
    ok: commandWorks('tesseract', ['--version']),
    what: 'tesseract OCR',
    install: 'apt-get install tesseract-ocr',
  };
}
