// Every Kubernetes overlay under k8s/overlays renders with `kubectl kustomize`, every rendered
// object is valid against the Kubernetes OpenAPI schemas (validate-k8s.mjs, kubernetes-models),
// and the workloads pass the checks an operator runs before applying: probes, resources,
// security context, PodDisruptionBudget, topology spread, NetworkPolicies, the Ingress routes
// and the Secrets the services read, and pinned image tags in production.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
};
type Validation = { apiVersion: string; kind: string; name: string | null; error: string | null };

const ROOT = path.resolve(__dirname, '../../..');
const OVERLAYS = path.join(ROOT, 'k8s/overlays');
const VALIDATOR = path.join(__dirname, '..', 'validate-k8s.mjs');
const SERVICES = { desk: 3001, link: 3002, hr: 3003 } as const;

function render(overlay: string): string {
  return execFileSync('kubectl', ['kustomize', path.join(OVERLAYS, overlay)], { encoding: 'utf8' });
}
function parse(yamlText: string): K8sObject[] {
  return parseAllDocuments(yamlText)
    .map((doc) => doc.toJS())
    .filter(Boolean);
}
function validate(yamlText: string): Validation[] {
  return JSON.parse(
    execFileSync('node', [VALIDATOR], { input: yamlText, encoding: 'utf8', cwd: path.dirname(VALIDATOR) }),
  );
}
const find = (objects: K8sObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);
const decode = (secret: K8sObject | undefined, key: string) =>
  secret?.data?.[key] ? Buffer.from(secret.data[key], 'base64').toString('utf8') : undefined;

const overlays = fs
  .readdirSync(OVERLAYS)
  .filter((name) => fs.existsSync(path.join(OVERLAYS, name, 'kustomization.yaml')));

test('there is a production overlay and a local one', () => {
  expect(overlays).toEqual(expect.arrayContaining(['production', 'local']));
});

test('the validator reports objects that break the schema (so the checks below can fail)', () => {
  const broken = [
    'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {selector: {}, template: ' +
      '{spec: {containers: [{name: a, ports: [{containerPort: http}]}]}}}',
    'apiVersion: example.com/v1\nkind: Unknown\nmetadata: {name: y}',
  ].join('\n---\n');
  const results = validate(broken);
  expect(results).toHaveLength(2);
  expect(results[0]!.error).toMatch(/containerPort must be integer/);
  expect(results[1]!.error).toBeTruthy();
});

describe.each(overlays)('overlay %s', (overlay) => {
  const rendered = render(overlay);
  const objects = parse(rendered);
  const deployments = objects.filter((o) => o.kind === 'Deployment');
  const services = deployments.filter((d) => d.metadata.name in SERVICES);

  test('every object is valid against the Kubernetes OpenAPI schemas', () => {
    const results = validate(rendered);
    expect(results).toHaveLength(objects.length);
    expect(results.filter((r) => r.error)).toEqual([]);
  });

  test('everything lives in the namespace msp, which enforces the restricted Pod Security Standard', () => {
    const namespace = find(objects, 'Namespace', 'msp');
    expect(namespace?.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    for (const object of objects.filter((o) => o.kind !== 'Namespace'))
      expect([object.kind, object.metadata.namespace]).toEqual([object.kind, 'msp']);
  });

  test('desk, link and hr are deployed', () => {
    expect(services.map((d) => d.metadata.name).sort()).toEqual(['desk', 'hr', 'link']);
  });

  test('every container has probes, resources and a locked-down security context', () => {
    for (const deployment of deployments) {
      const pod = deployment.spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.automountServiceAccountToken).toBe(false);
      for (const container of pod.containers) {
        const where = `${deployment.metadata.name}/${container.name}`;
        expect([where, Boolean(container.readinessProbe), Boolean(container.livenessProbe)]).toEqual([
          where,
          true,
          true,
        ]);
        expect(
          [
            where,
            container.resources?.requests?.cpu,
            container.resources?.requests?.memory,
            container.resources?.limits?.memory,
          ].every(Boolean),
        ).toBe(true);
        expect([where, container.securityContext]).toEqual([
          where,
          expect.objectContaining({
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          }),
        ]);
      }
    }
  });

  test('each service runs at least two replicas, spread over nodes, with a PodDisruptionBudget and a graceful stop', () => {
    for (const deployment of services) {
      const name = deployment.metadata.name;
      const pod = deployment.spec.template.spec;
      expect([name, deployment.spec.replicas >= 2]).toEqual([name, true]);
      expect(pod.topologySpreadConstraints).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            topologyKey: 'kubernetes.io/hostname',
            labelSelector: { matchLabels: { 'app.kubernetes.io/name': name } },
          }),
        ]),
      );
      const pdb = objects.find(
        (o) => o.kind === 'PodDisruptionBudget' && o.spec.selector.matchLabels?.['app.kubernetes.io/name'] === name,
      );
      expect([name, pdb?.spec.minAvailable ?? pdb?.spec.maxUnavailable]).toEqual([name, 1]);
      expect(pod.containers[0].startupProbe?.httpGet?.path).toBe('/healthz');
      expect(pod.containers[0].readinessProbe.httpGet.path).toBe('/readyz');
      expect(pod.containers[0].livenessProbe.httpGet.path).toBe('/healthz');
      expect(pod.containers[0].ports).toEqual([
        { name: 'http', containerPort: SERVICES[name as keyof typeof SERVICES] },
      ]);
      // The app's drain (SHUTDOWN_TIMEOUT_MS) plus the preStop sleep fit into the grace period.
      const config = find(objects, 'ConfigMap', 'msp-config');
      const preStop = Number(pod.containers[0].lifecycle.preStop.exec.command[1]);
      expect(preStop + Number(config?.data?.SHUTDOWN_TIMEOUT_MS) / 1000).toBeLessThan(
        pod.terminationGracePeriodSeconds,
      );
    }
  });

  test('the Ingress routes one host per service to its /api/v1 only, with TLS for every host', () => {
    const ingress = objects.find((o) => o.kind === 'Ingress');
    expect(ingress?.apiVersion).toBe('networking.k8s.io/v1');
    expect(ingress?.spec.ingressClassName).toBeTruthy();
    const rules = ingress?.spec.rules as Array<{ host: string; http: { paths: any[] } }>;
    expect(rules.map((r) => r.http.paths[0].backend.service.name).sort()).toEqual(['desk', 'hr', 'link']);
    for (const rule of rules) {
      expect(rule.host.startsWith(`${rule.http.paths[0].backend.service.name}.`)).toBe(true);
      expect(rule.http.paths).toEqual([
        {
          path: '/api/v1',
          pathType: 'Prefix',
          backend: { service: { name: rule.host.split('.')[0], port: { name: 'http' } } },
        },
      ]);
      const tls = (ingress?.spec.tls as Array<{ hosts: string[]; secretName: string }>).find((t) =>
        t.hosts.includes(rule.host),
      );
      expect([rule.host, Boolean(tls?.secretName)]).toEqual([rule.host, true]);
    }
  });

  test('NetworkPolicies deny by default and allow exactly the needed flows', () => {
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
    const byName = (name: string) => policies.find((p) => p.metadata.name === name)?.spec;
    expect(byName('default-deny')).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    // DNS for everyone, to kube-dns only.
    expect(byName('allow-dns').egress).toEqual([
      expect.objectContaining({
        ports: [
          { protocol: 'UDP', port: 53 },
          { protocol: 'TCP', port: 53 },
        ],
      }),
    ]);
    // The ingress controller's namespace reaches the services' http port, nothing else does from outside.
    expect(byName('allow-from-ingress-controller').ingress[0].from).toEqual([
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } },
    ]);
    // desk accepts link and hr (and its own replicas) on 3001.
    const desk = byName('desk-from-link-and-hr');
    expect(desk.podSelector).toEqual({ matchLabels: { 'app.kubernetes.io/name': 'desk' } });
    expect(desk.ingress[0].from[0].podSelector.matchExpressions[0].values.sort()).toEqual(['desk', 'hr', 'link']);
    expect(desk.ingress[0].ports).toEqual([{ protocol: 'TCP', port: 3001 }]);
    // The services reach desk, PostgreSQL and Redis; only link reaches the internet, and not private ranges.
    const egress = byName('services-egress').egress;
    expect(egress.flatMap((rule: any) => rule.ports.map((p: any) => p.port)).sort()).toEqual([3001, 5432, 6379]);
    const internet = byName('link-to-internet');
    expect(internet.podSelector).toEqual({ matchLabels: { 'app.kubernetes.io/name': 'link' } });
    expect(internet.egress[0].to[0].ipBlock.except).toEqual(
      expect.arrayContaining(['10.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.168.0.0/16']),
    );
    // No policy allows every source or every destination on every port.
    for (const policy of policies) {
      for (const rule of [...(policy.spec.ingress ?? []), ...(policy.spec.egress ?? [])])
        expect([policy.metadata.name, Boolean(rule.ports?.length)]).toEqual([policy.metadata.name, true]);
    }
  });

  test('link calls desk inside the cluster and carries its desk credential and encryption key from a Secret', () => {
    const link = services.find((d) => d.metadata.name === 'link')!.spec.template.spec.containers[0];
    expect(link.env).toEqual(expect.arrayContaining([{ name: 'DESK_API_URL', value: 'http://desk:3001/api/v1' }]));
    const secretRefs = (container: any) =>
      container.envFrom.filter((e: any) => e.secretRef).map((e: any) => e.secretRef.name);
    for (const deployment of services) {
      for (const ref of secretRefs(deployment.spec.template.spec.containers[0])) {
        // production: created by the operator (k8s/secrets.example.yaml); local: generated here.
        if (overlay !== 'production') expect([ref, Boolean(find(objects, 'Secret', ref))]).toEqual([ref, true]);
      }
    }
    if (overlay === 'production') return;
    const linkSecret = find(
      objects,
      'Secret',
      secretRefs(link).find((n: string) => n.startsWith('link-secrets'))!,
    );
    const deskContainer = services.find((d) => d.metadata.name === 'desk')!.spec.template.spec.containers[0];
    const deskSecret = find(
      objects,
      'Secret',
      secretRefs(deskContainer).find((n: string) => n.startsWith('desk-secrets'))!,
    );
    expect(Buffer.from(decode(linkSecret, 'CONNECTOR_ENCRYPTION_KEY')!, 'base64')).toHaveLength(32);
    const clients = JSON.parse(decode(deskSecret, 'SERVICE_CLIENTS')!) as Array<{
      client_id: string;
      client_secret: string;
    }>;
    expect(clients).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          client_id: decode(linkSecret, 'DESK_CLIENT_ID'),
          client_secret: decode(linkSecret, 'DESK_CLIENT_SECRET'),
        }),
      ]),
    );
  });

  test(
    'the HA variables reach every service: the Redis Secret (REDIS_URL or the Sentinels) ' +
      'and the database Secret (DATABASE_URL, DATABASE_READ_URL) of each',
    () => {
      const example = fs.readFileSync(path.join(__dirname, '../../../k8s/secrets.example.yaml'), 'utf8');
      for (const name of ['REDIS_SENTINELS', 'REDIS_SENTINEL_NAME', 'DATABASE_READ_URL'])
        expect(example).toContain(name);
      for (const deployment of services) {
        const refs = deployment.spec.template.spec.containers[0].envFrom
          .filter((e: any) => e.secretRef)
          .map((e: any) => e.secretRef.name as string);
        // Every key of these Secrets becomes a variable of the same name: the HA ones need no manifest change.
        expect(refs.some((ref: string) => ref.startsWith('msp-redis'))).toBe(true);
        expect(refs.some((ref: string) => ref.startsWith(`${deployment.metadata.name}-secrets`))).toBe(true);
      }
    },
  );

  if (overlay === 'production') {
    test('production images come from a registry at a pinned tag (no latest, no dev)', () => {
      for (const deployment of deployments) {
        for (const container of deployment.spec.template.spec.containers) {
          expect(container.image).toMatch(/^[a-z0-9.-]+\.[a-z]+(:\d+)?\/[^:@]+(:[\w.-]+|@sha256:[0-9a-f]{64})$/);
          expect(container.image).not.toMatch(/:(latest|dev)$/);
        }
      }
    });
  }
});
