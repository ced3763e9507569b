// The Kubernetes manifests as Kubernetes would take them: every kustomization (the base, infra/k8s,
// and each overlay under infra/overlays) rendered by `kubectl kustomize`, every object checked against
// the Kubernetes API schemas (kubernetes-models, offline), then Bindery's own rules: non-root and
// read-only pods with probes on the ops port, requests and limits, a disruption budget per service,
// autoscaling for the gateway and the catalog, closed networking with only the gateway's HTTP port
// open, secrets from Secrets, and the Postgres connection budget. The alert rules and the dashboard
// may name only metrics a running Bindery exports.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Service } from 'kubernetes-models/v1/Service';
import { ROOT, startBindery, type Bindery } from '../support/bindery';
import { freePort } from '../support/ops';

/** A default Postgres (max_connections = 100) less room for an admin session and migrations. */
const CONNECTION_BUDGET = 90;
const SERVICES = ['gateway', 'catalog', 'identity', 'reading', 'device-sync'];

type Obj = Record<string, any>;

const MODELS: Record<string, new (o: any) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/ConfigMap': ConfigMap,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'v1/Service': Service,
};

const kubectl = (() => {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const KUSTOMIZATIONS = ['infra/k8s', ...readdirSync(join(ROOT, 'infra/overlays')).map((d) => `infra/overlays/${d}`)].filter((d) => existsSync(join(ROOT, d, 'kustomization.yaml')));

function render(dir: string): Obj[] {
  const out = execFileSync('kubectl', ['kustomize', join(ROOT, dir)], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return parseAllDocuments(out).map((d) => {
    if (d.errors.length > 0) throw new Error(`${dir}: ${d.errors[0]!.message}`);
    return d.toJSON() as Obj;
  });
}

const matches = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
const envOf = (c: Obj, name: string): Obj | undefined => (c.env as Obj[] | undefined)?.find((e) => e.name === name);

describe.skipIf(!kubectl)('Kubernetes manifests (kubectl kustomize; skipped: kubectl is not on this machine)', () => {
  it('finds the base and at least one overlay', () => {
    expect(KUSTOMIZATIONS).toContain('infra/k8s');
    expect(KUSTOMIZATIONS.length).toBeGreaterThan(1);
  });

  for (const dir of KUSTOMIZATIONS) {
    describe(dir, () => {
      const objs = kubectl ? render(dir) : [];
      const of = (kind: string) => objs.filter((o) => o.kind === kind);
      const deployments = of('Deployment');

      it('renders objects that each match their Kubernetes schema', () => {
        expect(objs.length).toBeGreaterThan(10);
        for (const o of objs) {
          const Model = MODELS[`${o.apiVersion}/${o.kind}`];
          expect(Model, `${o.apiVersion} ${o.kind} has no schema here`).toBeDefined();
          expect(() => new Model!(o).validate(), `${o.kind}/${o.metadata?.name}`).not.toThrow();
        }
      });

      it('runs each service as a non-root, read-only Deployment with probes, requests and limits', () => {
        expect(deployments.map((d) => d.metadata.name).sort()).toEqual(SERVICES.map((s) => `bindery-${s}`).sort());
        for (const d of deployments) {
          const pod = d.spec.template.spec;
          const name = d.metadata.name as string;
          expect(pod.securityContext?.runAsNonRoot, name).toBe(true);
          expect(pod.automountServiceAccountToken, name).toBe(false);
          for (const c of pod.containers as Obj[]) {
            expect(c.securityContext?.readOnlyRootFilesystem, name).toBe(true);
            expect(c.securityContext?.allowPrivilegeEscalation, name).toBe(false);
            expect(c.securityContext?.capabilities?.drop, name).toEqual(['ALL']);
            expect(c.image, name).toMatch(/^[^:]+:(?!latest$)[\w.-]+$/);
            expect(c.resources?.requests?.cpu, name).toBeTruthy();
            expect(c.resources?.requests?.memory, name).toBeTruthy();
            expect(c.resources?.limits?.memory, name).toBeTruthy();
            expect(c.readinessProbe?.httpGet, name).toEqual({ path: '/readyz', port: 'ops' });
            expect(c.livenessProbe?.httpGet, name).toEqual({ path: '/healthz', port: 'ops' });
            expect((c.ports as Obj[]).find((p) => p.name === 'ops')?.containerPort, name).toBe(9464);
            for (const secret of ['NATS_PASSWORD', 'DATABASE_URL', 'JWT_SECRET'])
              expect(envOf(c, secret)?.valueFrom?.secretKeyRef?.name, `${name} ${secret}`).toBe('bindery-secrets');
            expect(Number(envOf(c, 'DATABASE_POOL_MAX')?.value), name).toBeGreaterThan(0);
          }
        }
      });

      it('gives every service a disruption budget that selects its pods', () => {
        for (const d of deployments) {
          const labels = d.spec.template.metadata.labels as Record<string, string>;
          const pdbs = of('PodDisruptionBudget').filter((p) => matches(p.spec.selector.matchLabels, labels));
          expect(pdbs.length, d.metadata.name).toBe(1);
          const replicas = (d.spec.replicas as number) ?? 1;
          // a budget must leave a drain possible: with one replica, minAvailable 1 would block it
          if (pdbs[0]!.spec.minAvailable !== undefined) expect(pdbs[0]!.spec.minAvailable, d.metadata.name).toBeLessThan(replicas);
        }
      });

      it('scales the gateway and the catalog where it runs replicas, and stays in the Postgres connection budget', () => {
        const hpas = of('HorizontalPodAutoscaler');
        const ha = deployments.every((d) => (d.spec.replicas ?? 1) >= 2);
        if (ha) expect(hpas.map((h) => h.spec.scaleTargetRef.name).sort()).toEqual(['bindery-catalog', 'bindery-gateway']);
        let connections = 0;
        for (const d of deployments) {
          const hpa = hpas.find((h) => h.spec.scaleTargetRef.name === d.metadata.name);
          const most = hpa ? (hpa.spec.maxReplicas as number) : ((d.spec.replicas as number) ?? 1);
          if (hpa) expect(hpa.spec.minReplicas).toBe(d.spec.replicas);
          connections += most * Number(envOf(d.spec.template.spec.containers[0], 'DATABASE_POOL_MAX')?.value);
        }
        expect(connections).toBeLessThanOrEqual(CONNECTION_BUDGET);
      });

      it('closes the network: only the gateway’s HTTP port is open to anyone, services reach NATS, Postgres and DNS', () => {
        const policies = of('NetworkPolicy');
        const deny = policies.find((p) => matches(p.spec.podSelector.matchLabels ?? {}, { app: 'bindery' }) && !p.spec.ingress && !p.spec.egress);
        expect(deny?.spec.policyTypes?.sort()).toEqual(['Egress', 'Ingress']);
        for (const d of deployments) {
          const labels = d.spec.template.metadata.labels as Record<string, string>;
          const open = policies
            .filter((p) => matches(p.spec.podSelector.matchLabels ?? {}, labels))
            .flatMap((p) => (p.spec.ingress ?? []) as Obj[])
            .filter((rule) => !rule.from);
          const ports = open.flatMap((rule) => (rule.ports as Obj[]).map((p) => p.port));
          expect(ports, d.metadata.name).toEqual(labels.service === 'gateway' ? [8080] : []);
          const egressPorts = policies
            .filter((p) => matches(p.spec.podSelector.matchLabels ?? {}, labels))
            .flatMap((p) => (p.spec.egress ?? []) as Obj[])
            .flatMap((rule) => (rule.ports as Obj[]).map((p) => p.port))
            .sort((a, b) => a - b);
          expect(egressPorts, d.metadata.name).toEqual(labels.service === 'gateway' ? [53, 53, 443, 4222, 5432] : [53, 53, 4222, 5432]);
        }
      });
    });
  }
});

describe('alert rules and dashboard (infra/k8s/monitoring)', () => {
  const rules = parseYaml(readFileSync(join(ROOT, 'infra/k8s/monitoring/bindery-alerts.yaml'), 'utf8')) as { groups: { name: string; rules: Obj[] }[] };
  const dashboard = JSON.parse(readFileSync(join(ROOT, 'infra/k8s/monitoring/bindery-dashboard.json'), 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
  const exprs = [...rules.groups.flatMap((g) => g.rules.map((r) => r.expr as string)), ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr))];
  let bindery: Bindery;
  let exported: Set<string>;

  beforeAll(async () => {
    const port = await freePort();
    bindery = await startBindery('embedded', { OPS_PORT: String(port) });
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    exported = new Set([...text.matchAll(/^# TYPE (\S+) (\w+)$/gm)].flatMap((m) => (m[2] === 'histogram' ? [`${m[1]}_bucket`, `${m[1]}_sum`, `${m[1]}_count`] : [m[1]!])));
  });
  afterAll(() => bindery?.stop());

  it('has rules that each alert with a severity and a summary', () => {
    const all = rules.groups.flatMap((g) => g.rules);
    expect(all.length).toBeGreaterThan(5);
    for (const r of all) {
      expect(r.alert).toMatch(/^Bindery\w+$/);
      expect(['page', 'ticket', 'info']).toContain(r.labels?.severity);
      expect(typeof r.annotations?.summary).toBe('string');
    }
    expect(dashboard.panels.length).toBeGreaterThan(8);
  });

  it('names only metrics a running Bindery exports', () => {
    expect(exported.has('bindery_http_request_duration_seconds_bucket')).toBe(true);
    const named = new Set(exprs.flatMap((e) => [...e.matchAll(/\b((?:bindery|process|nodejs)_[a-z0-9_]+)\b/g)].map((m) => m[1]!)));
    expect(named.size).toBeGreaterThan(10);
    const unknown = [...named].filter((n) => !exported.has(n));
    expect(unknown).toEqual([]);
  });
});
