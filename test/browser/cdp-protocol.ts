import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Chrome DevTools Protocol as the runtime's playwright-core declares it
 * (`types/protocol.d.ts`, generated from Chromium's protocol definition): every command with the
 * names of its parameters and of its return values, nested objects' fields as dotted paths
 * (`data.files` of `Input.dispatchDragEvent`), followed three levels deep.
 */
export type CdpCommand = {
  /** `Domain.method`. */
  method: string;
  domain: string;
  /** Parameter names, nested ones dotted (`data.files`). */
  params: string[];
  /** Return value names, nested ones dotted (`cookies.path`). */
  returns: string[];
};

/**
 * Field names that hold a file or folder path of the browser's machine in the protocol (or would,
 * in a command added later): `files`, `filePath`, `downloadPath`, `localPath`, `path`, `dir`, …
 * Matched against the last segment of a dotted name.
 */
export const PATH_LIKE_NAME =
  /^(path|paths|files?|filePaths?|fileNames?|localPaths?|localDirectory|downloadPath|dir|directory|folder|[a-z]+Path|[a-z]+Dir|[a-z]+Directory|[a-z]+Folder)$/;

/** Reads every command of `protocol.d.ts` under `playwrightCoreDir`. */
export function cdpCommands(playwrightCoreDir: string): CdpCommand[] {
  const source = readFileSync(join(playwrightCoreDir, 'types', 'protocol.d.ts'), 'utf8');
  const lines = source.split('\n');
  /** `Domain.TypeName` → the body of its declaration, or `ALIAS <type>`. */
  const types = new Map<string, string>();
  let domain: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const namespace = /^ {2}export namespace (\w+) \{/.exec(line);
    if (namespace) {
      domain = namespace[1] as string;
      continue;
    }
    if (domain === null) continue;
    const opening = /^ {4}export (?:type|interface) (\w+)(?: = | )\{\s*$/.exec(line);
    if (opening) {
      const body: string[] = [];
      let j = i + 1;
      for (; j < lines.length && !/^ {4}\}/.test(lines[j] as string); j++) body.push(lines[j] as string);
      types.set(`${domain}.${opening[1]}`, body.join('\n'));
      i = j;
      continue;
    }
    const alias = /^ {4}export type (\w+) = (.*);$/.exec(line);
    if (alias) types.set(`${domain}.${alias[1]}`, `ALIAS ${alias[2]}`);
  }
  const fields = (typeName: string, depth: number, seen: Set<string>): string[] => {
    const body = types.get(typeName);
    if (body === undefined || depth > 3 || seen.has(typeName)) return [];
    const within = new Set(seen).add(typeName);
    const [home] = typeName.split('.');
    if (body.startsWith('ALIAS ')) {
      const target = body.slice(6).replace(/\[\]$/, '');
      return fields(target.includes('.') ? target : `${home}.${target}`, depth, within);
    }
    const found: string[] = [];
    for (const match of body.matchAll(/^ {6}(\w+)\??: ([^;]+);/gm)) {
      const name = match[1] as string;
      found.push(name);
      const type = (match[2] as string).replace(/\[\]$/, '').trim();
      if (/^[A-Z]\w*(\.\w+)?$/.test(type)) {
        const ref = type.includes('.') ? type : `${home}.${type}`;
        for (const nested of fields(ref, depth + 1, within)) found.push(`${name}.${nested}`);
      }
    }
    return found;
  };
  const commands = new Map<string, CdpCommand>();
  for (const match of source.matchAll(/^ {4}"(\w+)\.(\w+)": (\w+)\.(\w+)Parameters;/gm)) {
    const [, domainName, name, typeDomain, typeName] = match as unknown as [
      string,
      string,
      string,
      string,
      string,
    ];
    const method = `${domainName}.${name}`;
    if (commands.has(method)) continue;
    commands.set(method, {
      method,
      domain: domainName,
      params: fields(`${typeDomain}.${typeName}Parameters`, 0, new Set()),
      returns: fields(`${typeDomain}.${typeName}ReturnValue`, 0, new Set()),
    });
  }
  return [...commands.values()];
}

/** True when a dotted field name's last segment is {@link PATH_LIKE_NAME}. */
export function isPathLike(field: string): boolean {
  return PATH_LIKE_NAME.test(field.split('.').pop() ?? '');
}

/**
 * Parameters for `command` with every path-like field set to a path of the browser's machine
 * (`/etc` or `['/etc']`), nested ones inside their objects: what an attacker would send.
 */
export function pathParams(command: CdpCommand, path: string): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const field of command.params.filter(isPathLike)) {
    const segments = field.split('.');
    let at = params;
    for (const segment of segments.slice(0, -1)) {
      at[segment] ??= {};
      at = at[segment] as Record<string, unknown>;
    }
    const last = segments.at(-1) as string;
    at[last] = /s$/.test(last) ? [path] : path;
  }
  return params;
}
