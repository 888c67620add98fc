import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import { RUN_USER_CAPABILITIES } from '../../src/common/run-users.js';
import { parseServiceConfig } from '../../src/service/config.js';
import { type TestService, testService } from '../helpers/service.js';
import { describeManifest, envOf, find, kubectlMissing, kustomize, type Manifest } from './manifests.js';

/**
 * The service ships like the agent (docs/deployment.md): an image (Dockerfile.service), a Deployment
 * rendered with the agents by `kubectl kustomize deploy/kubernetes` (the SQLite overlay; both overlays:
 * kubernetes-overlays.test.ts), and a compose file. No Docker engine or cluster runs here, so the files are
 * checked for what they promise: one replica on a volume, non-root, a read-only root file system, no
 * capability, probes on routes the service really answers without a key, the agent pointed at the service,
 * and secrets from a Secret whose placeholders the service refuses.
 */
const read = (path: string) => readFileSync(join(PACKAGE_ROOT, path), 'utf8');
const SIX = Object.keys(RUN_USER_CAPABILITIES).sort();

/** The Dockerfile's instructions, comments dropped and continuation lines joined. */
const instructions = (text: string): string[] =>
  text
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => l.trim() !== '');

/** The path the image's HEALTHCHECK fetches. */
function healthcheckPath(dockerfile: string): string {
  const line = instructions(dockerfile).find((l) => l.startsWith('HEALTHCHECK'));
  const path = /127\.0\.0\.1:'\+\(process\.env\.PORT\|\|3000\)\+'(\/[^']*)'/.exec(line ?? '')?.[1];
  if (!path) throw new Error(`no HEALTHCHECK fetching a path on PORT: ${line}`);
  return path;
}

let service: TestService;
beforeAll(async () => {
  service = await testService();
});
afterAll(async () => {
  await service?.close();
});

/** Status of `GET path` on a real service, without any key or cookie. */
async function statusWithoutKey(path: string): Promise<number> {
  return (await service.app.inject({ method: 'GET', url: path })).statusCode;
}

describe('Dockerfile.service', () => {
  const text = read('Dockerfile.service');
  const lines = instructions(text);

  it('runs `outpost service` as the non-root node user, listening on 0.0.0.0:3000, the store on the /data volume', () => {
    const users = lines.filter((l) => l.startsWith('USER '));
    expect(users.at(-1)).toBe('USER node');
    const env = lines.filter((l) => l.startsWith('ENV ')).join(' ');
    expect(env).toMatch(/\bHOST=0\.0\.0\.0\b/);
    expect(env).toMatch(/\bOUTPOST_DATA_DIR=\/data\b/);
    expect(lines).toContain('VOLUME ["/data"]');
    expect(lines).toContain('EXPOSE 3000');
    // The volume's folder belongs to node before the USER line, or the service could not write it.
    expect(lines.join('\n')).toMatch(/chown node:node \/data/);
    expect(lines.at(-1)).toBe('CMD ["service"]');
  });

  it('is multi-stage: build tools stay in the build stage, no browser, Node 24 in both', () => {
    const froms = lines.filter((l) => l.startsWith('FROM '));
    expect(froms).toEqual(['FROM node:24-bookworm-slim AS build', 'FROM node:24-bookworm-slim']);
    const finalStage = lines.slice(lines.indexOf(froms[1]!)).join('\n');
    expect(finalStage).not.toMatch(/\b(g\+\+|make|python3|chromium)\b/);
    expect(finalStage).toMatch(/COPY --from=build \/app\/dist/);
  });

  it('checks its health on a route the service answers without a key', async () => {
    const path = healthcheckPath(text);
    expect(await statusWithoutKey(path)).toBe(200);
    // A route behind the key would answer 401, so the check above can fail.
    expect(await statusWithoutKey('/v1/checks')).toBe(401);
  });

  it('gets no build output, data or node_modules from the context (.dockerignore)', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['node_modules', 'dist', 'build', 'data', '*.db']) expect(ignored).toContain(entry);
  });
});

const kubectl = kubectlMissing();

describe.skipIf(kubectl !== null)('deploy/kubernetes (kubectl kustomize)', () => {
  let manifests: Manifest[] = [];
  const byKind = (kind: string) => manifests.filter((m) => m.kind === kind);
  const serviceDeployment = () => find(manifests, 'Deployment', 'outpost-service');

  beforeAll(() => {
    manifests = kustomize('deploy/kubernetes');
  });

  it('renders the service (Secret, Service, Deployment, its claim) and the agents (Deployments)', () => {
    expect(manifests.map(describeManifest).sort()).toEqual([
      'Deployment/outpost-agent',
      'Deployment/outpost-agent-uptime',
      'Deployment/outpost-service',
      'PersistentVolumeClaim/data-outpost-service-0',
      'Secret/outpost-service',
      'Service/outpost-service',
    ]);
  });

  it('runs one replica of the service, stopped before it is replaced, with the SQLite store on a claimed volume at OUTPOST_DATA_DIR', () => {
    const deployment = serviceDeployment();
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy.type).toBe('Recreate');
    const container = deployment.spec.template.spec.containers[0];
    const env = envOf(container);
    expect(env.HOST).toBe('0.0.0.0');
    const dataMount = container.volumeMounts.find((m: any) => m.mountPath === env.OUTPOST_DATA_DIR);
    expect(dataMount, 'a volume mounted at OUTPOST_DATA_DIR').toBeDefined();
    const volume = deployment.spec.template.spec.volumes.find((v: any) => v.name === dataMount.name);
    const claim = find(manifests, 'PersistentVolumeClaim', volume.persistentVolumeClaim.claimName);
    expect(claim.spec.accessModes).toEqual(['ReadWriteOnce']);
  });

  it('runs the service non-root, read-only root file system, no capability, seccomp RuntimeDefault; only volumes writable', () => {
    const pod = serviceDeployment().spec.template.spec;
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 1000,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    const container = pod.containers[0];
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    const volumes = new Set(pod.volumes.map((v: any) => v.name));
    const mounts = container.volumeMounts.map((m: any) => m.mountPath).sort();
    expect(mounts).toEqual(['/data', '/tmp']);
    for (const m of container.volumeMounts) expect(volumes.has(m.name), m.name).toBe(true);
  });

  it('probes the service on its port at its health routes, answered without a key (200)', async () => {
    const container = serviceDeployment().spec.template.spec.containers[0];
    const port = container.ports.find((p: any) => p.name === 'http');
    expect(port.containerPort).toBe(3000);
    const paths: Record<string, string> = {};
    for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
      expect(container[probe]?.httpGet?.port, probe).toBe('http');
      paths[probe] = container[probe].httpGet.path;
    }
    expect(paths).toEqual({
      startupProbe: '/-/liveness',
      readinessProbe: '/-/readiness',
      livenessProbe: '/-/liveness',
    });
    for (const path of new Set(Object.values(paths))) expect(await statusWithoutKey(path), path).toBe(200);
  });

  it('takes both keys from the Secret, whose placeholders the service refuses to start with', () => {
    const container = serviceDeployment().spec.template.spec.containers[0];
    const [secret] = byKind('Secret');
    const fromSecret: Record<string, string> = {};
    for (const name of ['OUTPOST_API_KEY', 'OUTPOST_ENCRYPTION_KEY']) {
      const ref = container.env.find((e: any) => e.name === name)?.valueFrom?.secretKeyRef;
      expect(ref, name).toMatchObject({ name: secret!.metadata.name, key: name });
      fromSecret[name] = secret!.stringData[name];
    }
    // Applied unchanged, the pod stops at start (exit code 2) instead of running with a known key.
    expect(() => parseServiceConfig({ OUTPOST_API_KEY: fromSecret.OUTPOST_API_KEY })).toThrow(
      /OUTPOST_API_KEY must be/,
    );
    expect(() => parseServiceConfig({ OUTPOST_ENCRYPTION_KEY: fromSecret.OUTPOST_ENCRYPTION_KEY })).toThrow(
      /OUTPOST_ENCRYPTION_KEY must be/,
    );
    expect(() =>
      parseServiceConfig({ OUTPOST_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') }),
    ).not.toThrow();
  });

  it("points the agent's SERVICE_URL at the service's Service and port", () => {
    const agent = find(manifests, 'Deployment', 'outpost-agent').spec.template.spec.containers[0];
    const url = new URL(envOf(agent).SERVICE_URL);
    const [svc] = byKind('Service');
    expect(url.hostname).toBe(svc!.metadata.name);
    expect(Number(url.port)).toBe(svc!.spec.ports[0].port);
    expect(svc!.spec.selector).toEqual(serviceDeployment().spec.template.metadata.labels);
  });
});

describe('deploy/compose.yaml', () => {
  const compose = parseYaml(read('deploy/compose.yaml')) as { services: Record<string, any> };
  const { service, agent } = compose.services;

  it('parses, and builds each image from a Dockerfile of the repository', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['agent', 'service']);
    for (const s of [service, agent]) {
      expect(existsSync(join(PACKAGE_ROOT, 'deploy', s.build.context, s.build.dockerfile))).toBe(true);
    }
    expect(service.build.dockerfile).toBe('Dockerfile.service');
  });

  it('keeps the store on a named volume at the image data directory, as a non-root service without capabilities', () => {
    expect(service.volumes).toContain('outpost-data:/data');
    expect(service.user).toBe('node');
    expect(service.read_only).toBe(true);
    expect(service.cap_drop).toEqual(['ALL']);
  });

  it('gives the agent the six capabilities of docs/security.md and nothing else, a pl_ key and the service URL', () => {
    expect(agent.cap_drop).toEqual(['ALL']);
    expect([...agent.cap_add].sort()).toEqual(SIX);
    expect(agent.sysctls['net.ipv4.ping_group_range']).toBe('0 2147483647');
    expect(agent.environment.API_KEY).toMatch(/^\$\{OUTPOST_AGENT_KEY:-\}$/);
    const url = new URL(agent.environment.SERVICE_URL);
    expect(url.hostname).toBe('service');
    expect(service.ports).toContain(`${url.port}:${url.port}`);
    expect(agent.depends_on.service.condition).toBe('service_healthy');
  });
});
