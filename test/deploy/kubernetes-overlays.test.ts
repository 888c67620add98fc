import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import { RUN_USER_CAPABILITIES } from '../../src/common/run-users.js';
import { parseServiceConfig } from '../../src/service/config.js';
import {
  containersOf,
  describeManifest,
  envOf,
  find,
  kubectlMissing,
  kustomize,
  type Manifest,
  selects,
  validateManifest,
} from './manifests.js';

/**
 * deploy/kubernetes is a Kustomize base with two overlays (docs/deployment.md, "Kubernetes" and "Several
 * replicas on PostgreSQL"): sqlite, one service replica on a claimed volume, which `kubectl apply -k
 * deploy/kubernetes` applies; and postgres, two replicas or more with no volume of their own, a
 * PodDisruptionBudget, spreading over nodes, a migrate step, and KEDA scaling the agents. No cluster runs
 * here: every overlay is rendered with `kubectl kustomize` and each object validated against the Kubernetes
 * schema of its kind (kubernetes-models); KEDA's ScaledObject, which has none there, is checked by hand.
 */
const read = (path: string) => readFileSync(join(PACKAGE_ROOT, path), 'utf8');
const SIX = Object.keys(RUN_USER_CAPABILITIES).sort();

/** The kustomizations a user applies: the default (deploy/kubernetes) and both overlays. */
const RENDERED = [
  'deploy/kubernetes',
  'deploy/kubernetes/overlays/sqlite',
  'deploy/kubernetes/overlays/postgres',
];
/** Deployments every rendering has. */
const SERVICE = 'outpost-service';
const AGENT = 'outpost-agent';
const UPTIME_AGENT = 'outpost-agent-uptime';

const kubectl = kubectlMissing();

describe.skipIf(kubectl !== null).each(RENDERED)('kubectl kustomize %s', (dir) => {
  let manifests: Manifest[] = [];
  beforeAll(() => {
    manifests = kustomize(dir);
  });
  const deployments = () => manifests.filter((m) => m.kind === 'Deployment');

  it('renders the service, its Secret and Service, the agent and the uptime agent', () => {
    const names = manifests.map(describeManifest);
    for (const expected of [
      `Secret/${SERVICE}`,
      `Service/${SERVICE}`,
      `Deployment/${SERVICE}`,
      `Deployment/${AGENT}`,
      `Deployment/${UPTIME_AGENT}`,
    ])
      expect(names).toContain(expected);
    // One name per kind: an overlay patches the base's objects, it does not add look-alikes.
    expect(new Set(names).size).toBe(names.length);
  });

  it('renders only objects valid against the Kubernetes schema of their kind; custom resources are KEDA ScaledObjects', () => {
    const custom = manifests.filter((m) => !validateManifest(m));
    for (const m of custom) expect(`${m.apiVersion}/${m.kind}`).toBe('keda.sh/v1alpha1/ScaledObject');
  });

  it('selects its own pods in every Deployment, and the Service selects the service pods only', () => {
    for (const d of deployments())
      expect(selects(d.spec.selector, d.spec.template.metadata.labels), d.metadata.name).toBe(true);
    const service = find(manifests, 'Service', SERVICE);
    for (const d of deployments()) {
      const selector = { matchLabels: service.spec.selector };
      expect(selects(selector, d.spec.template.metadata.labels), d.metadata.name).toBe(
        d.metadata.name === SERVICE,
      );
    }
  });

  it('keeps every security setting: no privilege escalation, read-only root, capabilities dropped, seccomp; non-root but for the agent', () => {
    for (const d of deployments()) {
      const pod = d.spec.template.spec;
      expect(pod.securityContext?.seccompProfile, d.metadata.name).toEqual({ type: 'RuntimeDefault' });
      for (const { name, spec } of containersOf(d)) {
        const where = `${d.metadata.name}/${name}`;
        const sc = spec.securityContext;
        expect(sc?.allowPrivilegeEscalation, where).toBe(false);
        expect(sc?.readOnlyRootFilesystem, where).toBe(true);
        expect(sc?.capabilities?.drop, where).toEqual(['ALL']);
        expect(sc?.privileged, where).toBeUndefined();
        if (d.metadata.name === AGENT) {
          // The image's entrypoint starts as root to hand the agent its six capabilities (docs/security.md).
          expect(sc.runAsNonRoot ?? pod.securityContext.runAsNonRoot, where).not.toBe(true);
          expect([...sc.capabilities.add].sort(), where).toEqual(SIX);
        } else {
          expect(sc.runAsNonRoot, where).toBe(true);
          expect(pod.securityContext.runAsNonRoot, where).toBe(true);
          expect(pod.securityContext.runAsUser, where).toBe(1000);
          expect(sc.capabilities.add, where).toBeUndefined();
        }
      }
    }
  });

  it('mounts only volumes the pod declares, and every claim and Secret it names is rendered', () => {
    for (const d of deployments()) {
      const pod = d.spec.template.spec;
      const volumes = new Map<string, any>(pod.volumes.map((v: any) => [v.name, v]));
      for (const { name, spec } of containersOf(d)) {
        for (const mount of spec.volumeMounts ?? [])
          expect(volumes.has(mount.name), `${d.metadata.name}/${name}: ${mount.name}`).toBe(true);
        for (const [variable, value] of Object.entries(envOf(spec))) {
          const ref = (value as any)?.secretKeyRef;
          if (!ref) continue;
          // The agents' Secret is made with kubectl create secret; the service's is rendered.
          const secret = find(manifests, 'Secret', ref.name);
          expect(Object.keys(secret.stringData ?? {}), `${name}: ${variable}`).toContain(ref.key);
        }
      }
      for (const volume of volumes.values()) {
        const claim = volume.persistentVolumeClaim?.claimName;
        if (claim) find(manifests, 'PersistentVolumeClaim', claim);
      }
    }
  });

  it('probes every container on /-/readiness and /-/liveness: the service on its port http, the agents on health', () => {
    for (const [name, port] of [
      [SERVICE, 'http'],
      [AGENT, 'health'],
      [UPTIME_AGENT, 'health'],
    ] as const) {
      const container = find(manifests, 'Deployment', name).spec.template.spec.containers[0];
      expect(container.readinessProbe.httpGet, name).toEqual({ path: '/-/readiness', port });
      expect(container.livenessProbe.httpGet, name).toEqual({ path: '/-/liveness', port });
      expect(container.ports.map((p: any) => p.name)).toContain(port);
    }
  });

  it("points both agents' SERVICE_URL at the service's Service and port", () => {
    const service = find(manifests, 'Service', SERVICE);
    for (const name of [AGENT, UPTIME_AGENT]) {
      const container = find(manifests, 'Deployment', name).spec.template.spec.containers[0];
      const url = new URL(envOf(container).SERVICE_URL);
      expect(url.hostname, name).toBe(SERVICE);
      expect(Number(url.port), name).toBe(service.spec.ports[0].port);
    }
    expect(envOf(find(manifests, 'Deployment', UPTIME_AGENT).spec.template.spec.containers[0])).toMatchObject(
      {
        AGENT_PROFILE: 'uptime',
        API_KEY_FILE: '/var/run/secrets/outpost/API_KEY',
      },
    );
  });

  it('gives every replica of the service its two keys from the one Secret', () => {
    const container = find(manifests, 'Deployment', SERVICE).spec.template.spec.containers[0];
    const env = envOf(container);
    for (const key of ['OUTPOST_API_KEY', 'OUTPOST_ENCRYPTION_KEY'])
      expect(env[key]?.secretKeyRef, key).toEqual({ name: SERVICE, key });
  });
});

describe.skipIf(kubectl !== null)('deploy/kubernetes/overlays/sqlite', () => {
  let manifests: Manifest[] = [];
  beforeAll(() => {
    manifests = kustomize('deploy/kubernetes/overlays/sqlite');
  });

  it('is what `kubectl apply -k deploy/kubernetes` applies', () => {
    expect(kustomize('deploy/kubernetes')).toEqual(manifests);
  });

  it('runs exactly one replica, replaced by Recreate (one writer), on a ReadWriteOnce claim at OUTPOST_DATA_DIR', () => {
    const service = find(manifests, 'Deployment', SERVICE);
    expect(service.spec.replicas).toBe(1);
    expect(service.spec.strategy).toEqual({ type: 'Recreate' });
    const container = service.spec.template.spec.containers[0];
    const env = envOf(container);
    expect(env.OUTPOST_DATABASE_URL).toBeUndefined();
    const mount = container.volumeMounts.find((m: any) => m.mountPath === env.OUTPOST_DATA_DIR);
    const volume = service.spec.template.spec.volumes.find((v: any) => v.name === mount?.name);
    const claim = find(manifests, 'PersistentVolumeClaim', volume?.persistentVolumeClaim?.claimName);
    expect(claim.spec.accessModes).toEqual(['ReadWriteOnce']);
  });

  it("keeps the store of earlier versions' StatefulSet: the claim has the name its volumeClaimTemplate gave", () => {
    // volumeClaimTemplates "data" of StatefulSet outpost-service, pod 0.
    expect(manifests.filter((m) => m.kind === 'PersistentVolumeClaim').map((m) => m.metadata.name)).toEqual([
      `data-${SERVICE}-0`,
    ]);
    expect(manifests.filter((m) => m.kind === 'StatefulSet')).toEqual([]);
  });
});

describe.skipIf(kubectl !== null)('deploy/kubernetes/overlays/postgres', () => {
  let manifests: Manifest[] = [];
  let service: Manifest;
  beforeAll(() => {
    manifests = kustomize('deploy/kubernetes/overlays/postgres');
    service = find(manifests, 'Deployment', SERVICE);
  });
  const podLabels = () => service.spec.template.metadata.labels;

  it('runs two replicas or more, updated one at a time while the others serve', () => {
    expect(service.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(service.spec.strategy.type).toBe('RollingUpdate');
    expect(service.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
  });

  it('gives the service no claimed volume: no PersistentVolumeClaim at all, /data is the pod’s own', () => {
    expect(manifests.filter((m) => m.kind === 'PersistentVolumeClaim' || m.kind === 'StatefulSet')).toEqual(
      [],
    );
    const pod = service.spec.template.spec;
    expect(pod.volumes.filter((v: any) => v.persistentVolumeClaim)).toEqual([]);
    const dataDir = envOf(pod.containers[0]).OUTPOST_DATA_DIR;
    const mount = pod.containers[0].volumeMounts.find((m: any) => m.mountPath === dataDir);
    expect(pod.volumes.find((v: any) => v.name === mount?.name)?.emptyDir).toEqual({});
  });

  it('takes OUTPOST_DATABASE_URL from a Secret key, whose placeholder the service refuses to start with', () => {
    const env = envOf(service.spec.template.spec.containers[0]);
    const ref = env.OUTPOST_DATABASE_URL?.secretKeyRef;
    expect(ref).toEqual({ name: SERVICE, key: 'OUTPOST_DATABASE_URL' });
    const placeholder = find(manifests, 'Secret', ref.name).stringData[ref.key];
    expect(placeholder).toMatch(/^REPLACE ME/);
    const key = Buffer.alloc(32, 7).toString('base64');
    expect(() =>
      parseServiceConfig({ OUTPOST_DATABASE_URL: placeholder, OUTPOST_ENCRYPTION_KEY: key }),
    ).toThrow(/OUTPOST_DATABASE_URL must be/);
    expect(() =>
      parseServiceConfig({
        OUTPOST_DATABASE_URL: 'postgres://outpost:secret@db.example.internal:5432/outpost',
        OUTPOST_ENCRYPTION_KEY: key,
      }),
    ).not.toThrow();
  });

  it('is ready only when its store answers (/-/readiness), and is given time to stop after leaving the Service', () => {
    const pod = service.spec.template.spec;
    expect(pod.containers[0].readinessProbe.httpGet.path).toBe('/-/readiness');
    const pause = pod.containers[0].lifecycle?.preStop?.exec?.command;
    expect(pause?.[0]).toBe('sleep');
    // The pause and the long polls the service answers when it stops (30 s) fit in the grace period.
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(30 + Number(pause[1]));
  });

  it('runs `outpost migrate` with the same image, database and key before the service starts', () => {
    const [migrate, ...others] = containersOf(service).filter((c) => c.init);
    expect(others).toEqual([]);
    const main = service.spec.template.spec.containers[0];
    expect(migrate!.spec.image).toBe(main.image);
    // The image's entry point is the CLI (Dockerfile.service: ENTRYPOINT … cli.js, CMD ["service"]), so the
    // arguments are its subcommand, as the service container's are.
    const dockerfile = read('Dockerfile.service');
    expect(dockerfile).toMatch(/^ENTRYPOINT \[.*"dist\/src\/cli\.js"\]$/m);
    expect(dockerfile).toMatch(/^CMD \["service"\]$/m);
    expect(main.args).toEqual(['service']);
    expect(migrate!.spec.args).toEqual(['migrate']);
    const env = envOf(migrate!.spec);
    const mainEnv = envOf(main);
    for (const name of ['OUTPOST_DATABASE_URL', 'OUTPOST_ENCRYPTION_KEY'])
      expect(env[name], name).toEqual(mainEnv[name]);
  });

  it('keeps one replica through voluntary disruptions: a PodDisruptionBudget selecting the service pods only', () => {
    const budgets = manifests.filter((m) => m.kind === 'PodDisruptionBudget');
    expect(budgets).toHaveLength(1);
    const [pdb] = budgets;
    expect(pdb!.spec.minAvailable).toBe(1);
    expect(selects(pdb!.spec.selector, podLabels())).toBe(true);
    for (const name of [AGENT, UPTIME_AGENT]) {
      const labels = find(manifests, 'Deployment', name).spec.template.metadata.labels;
      expect(selects(pdb!.spec.selector, labels), name).toBe(false);
    }
  });

  it('spreads the replicas over nodes', () => {
    const pod = service.spec.template.spec;
    const spread = (pod.topologySpreadConstraints ?? []).filter(
      (c: any) => c.topologyKey === 'kubernetes.io/hostname' && selects(c.labelSelector, podLabels()),
    );
    const anti = (pod.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).filter(
      (t: any) => t.topologyKey === 'kubernetes.io/hostname' && selects(t.labelSelector, podLabels()),
    );
    expect(spread.length + anti.length).toBeGreaterThan(0);
    for (const c of spread) expect(c.maxSkew).toBe(1);
  });

  it('scales the agent Deployment with a KEDA ScaledObject on a trigger, and leaves its replica count to KEDA', () => {
    const scaled = manifests.filter((m) => m.kind === 'ScaledObject');
    expect(scaled).toHaveLength(1);
    const [so] = scaled;
    expect(so!.apiVersion).toBe('keda.sh/v1alpha1');
    // KEDA's required fields: scaleTargetRef.name (apiVersion and kind default to apps/v1 Deployment), triggers.
    const target = so!.spec.scaleTargetRef;
    expect(target.name).toBe(AGENT);
    expect(target.kind ?? 'Deployment').toBe('Deployment');
    expect(target.apiVersion ?? 'apps/v1').toBe('apps/v1');
    find(manifests, 'Deployment', target.name);
    expect(so!.spec.triggers.length).toBeGreaterThan(0);
    for (const trigger of so!.spec.triggers) {
      expect(typeof trigger.type).toBe('string');
      // KEDA reads every trigger setting as a string.
      for (const value of Object.values(trigger.metadata)) expect(typeof value).toBe('string');
    }
    const prometheus = so!.spec.triggers.find((t: any) => t.type === 'prometheus');
    expect(prometheus.metadata.serverAddress).toMatch(/^https?:\/\//);
    expect(prometheus.metadata.query).toMatch(/\boutpost_service_queued_jobs\b/);
    expect(Number(prometheus.metadata.threshold)).toBeGreaterThan(0);
    expect(so!.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
    expect(so!.spec.maxReplicaCount).toBeGreaterThanOrEqual(so!.spec.minReplicaCount);
    // A replica count in the Deployment would be set back by every `kubectl apply`, fighting KEDA.
    expect(find(manifests, 'Deployment', AGENT).spec.replicas).toBeUndefined();
  });

  it('changes nothing else of the agents than their replica count', () => {
    const sqlite = kustomize('deploy/kubernetes/overlays/sqlite');
    for (const name of [AGENT, UPTIME_AGENT]) {
      const { replicas: _ignored, ...spec } = find(sqlite, 'Deployment', name).spec;
      const { replicas: _alsoIgnored, ...postgresSpec } = find(manifests, 'Deployment', name).spec;
      expect(postgresSpec, name).toEqual(spec);
    }
  });
});

describe('docs/deployment.md', () => {
  it('names only deploy/ files that exist', () => {
    const named = [...read('docs/deployment.md').matchAll(/\bdeploy\/[\w./-]*[\w/]/g)].map((m) => m[0]);
    expect(named.length).toBeGreaterThan(5);
    const missing = [...new Set(named)].filter((path) => !existsSync(join(PACKAGE_ROOT, path)));
    // deploy/.env is the file the user writes.
    expect(missing.filter((path) => path !== 'deploy/.env')).toEqual([]);
  });
});
