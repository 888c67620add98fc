import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { PersistentVolumeClaim, Secret, Service } from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';
import { PACKAGE_ROOT } from '../../src/common/paths.js';
import { commandWorks, missingRequirement } from '../helpers/requirements.js';

/**
 * Rendering and checking the Kubernetes manifests of deploy/kubernetes without a cluster: `kubectl kustomize`
 * renders a kustomization, kubernetes-models validates each object against the Kubernetes API's schema.
 */

/** A rendered Kubernetes object, as plain data. */
export type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; [key: string]: any };

/**
 * Whether `kubectl` is here to render kustomizations: null when it is, else the reason to skip with (under
 * CI=true, {@link missingRequirement} throws instead).
 */
export function kubectlMissing(): string | null {
  return missingRequirement([
    {
      ok: commandWorks('kubectl', ['version', '--client']),
      what: 'kubectl',
      install: 'apt-get install kubernetes-client',
    },
  ]);
}

/**
 * The objects `kubectl kustomize <dir>` renders.
 * @param dir - a folder holding a kustomization.yaml, relative to the repository's root
 */
export function kustomize(dir: string): Manifest[] {
  const rendered = execFileSync('kubectl', ['kustomize', join(PACKAGE_ROOT, dir)], {
    encoding: 'utf8',
    timeout: 30_000,
    // kustomize's deprecation warnings go to stderr; they are not the rendering.
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return parseAllDocuments(rendered).map((d) => d.toJS() as Manifest);
}

/** Models of the kinds deploy/kubernetes renders, by `apiVersion/kind`. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'v1/Secret': Secret,
  'v1/Service': Service,
};

/**
 * Validates `manifest` against the Kubernetes schema of its kind (types, required fields, enumerations; the
 * schemas do not refuse unknown fields).
 * @returns false for a kind the Kubernetes API does not define (a custom resource: check it by hand)
 * @throws the schema's errors, or an Error for a built-in kind this helper has no model for yet
 */
export function validateManifest(manifest: Manifest): boolean {
  const key = `${manifest.apiVersion}/${manifest.kind}`;
  const Model = MODELS[key];
  if (Model) {
    try {
      new Model(manifest as never).validate();
    } catch (err) {
      throw new Error(`${describeManifest(manifest)}: ${(err as Error).message}`, { cause: err });
    }
    return true;
  }
  if (!manifest.apiVersion.includes('.')) {
    throw new Error(`${key} ${manifest.metadata.name}: add its kubernetes-models class to MODELS`);
  }
  return false;
}

/**
 * The object of `kind` named `name`.
 * @throws when the rendering has none
 */
export function find(manifests: Manifest[], kind: string, name: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind}/${name} in ${manifests.map(describeManifest).join(', ')}`);
  return found;
}

/** `Kind/name` of a manifest. */
export function describeManifest(manifest: Manifest): string {
  return `${manifest.kind}/${manifest.metadata.name}`;
}

/** A container of a pod template: its name, whether it is an init container, and its spec. */
export type PodContainer = { name: string; init: boolean; spec: any };

/** Every container of a Deployment's pod template, init containers first. */
export function containersOf(deployment: Manifest): PodContainer[] {
  const pod = deployment.spec.template.spec;
  return [
    ...(pod.initContainers ?? []).map((spec: any) => ({ name: spec.name, init: true, spec })),
    ...pod.containers.map((spec: any) => ({ name: spec.name, init: false, spec })),
  ];
}

/**
 * Whether a label selector's `matchLabels` select pods labelled `labels` (a selector with none selects
 * nothing here: the manifests always name their labels).
 */
export function selects(selector: { matchLabels?: Record<string, string> }, labels: Record<string, string>) {
  const wanted = Object.entries(selector.matchLabels ?? {});
  return wanted.length > 0 && wanted.every(([key, value]) => labels[key] === value);
}

/** A container's environment: each variable's `value`, or its `valueFrom`. */
export function envOf(container: any): Record<string, any> {
  return Object.fromEntries((container.env ?? []).map((e: any) => [e.name, e.value ?? e.valueFrom]));
}
