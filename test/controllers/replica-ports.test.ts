// `podvisor validate` on the process runtime warns of a workload whose replicas (or a Job's parallel
// pods) would each bind the same port on the shared host network; one replica, a DaemonSet, a
// template without ports or `--runtime containerd` draw no warning.

import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { sharedPortWarnings } from '../../src/controllers/replica-ports.js';
import type { KubeObject } from '../../src/kubeapi/backend.js';
import { runCli, tempDir } from '../fixtures/cli/cli-process.js';

const workload = (kind: string, spec: Record<string, unknown>, ports?: Array<Record<string, unknown>>): KubeObject =>
  ({
    apiVersion: kind === 'Job' ? 'batch/v1' : 'apps/v1',
    kind,
    metadata: { name: 'web' },
    spec: { ...spec, template: { spec: { containers: [{ name: 'main', image: 'x', ...(ports ? { ports } : {}) }] } } },
  }) as KubeObject;

test('a warning per workload whose concurrent pods name a fixed port', () => {
  const warnings = sharedPortWarnings([
    workload('Deployment', { replicas: 3 }, [{ containerPort: 8080 }]),
    workload('StatefulSet', { replicas: 2 }, [{ containerPort: 53, hostPort: 5353, protocol: 'UDP' }]),
    workload('Job', { parallelism: 4 }, [{ containerPort: 9000 }]),
    workload('Deployment', {}, [{ containerPort: 8080 }]),
    workload('ReplicaSet', { replicas: 3 }),
    workload('DaemonSet', {}, [{ containerPort: 8080 }]),
  ]);
  assert.equal(warnings.length, 3, warnings.join('\n'));
  assert.match(warnings[0]!, /^apps\/v1 Deployment "web" runs 3 replicas that each listen on 8080\/TCP: .*HostPortInUse.*--runtime containerd/);
  assert.match(warnings[1]!, /^apps\/v1 StatefulSet "web" runs 2 replicas that each listen on 5353\/UDP/);
  assert.match(warnings[2]!, /^batch\/v1 Job "web" runs 4 pods in parallel that each listen on 9000\/TCP/);
});

test('podvisor validate prints the warning on stderr, still validates, and not for --runtime containerd', async (t) => {
  const dir = await tempDir();
  t.after(() => dir.remove());
  const file = join(dir.path, 'web.yaml');
  await writeFile(
    file,
    `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: main, image: nginx, ports: [{containerPort: 8080}]}]
`,
  );
  let r = await runCli(['validate', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /deployment\.apps\/web validated/);
  assert.match(r.stderr, /^Warning: apps\/v1 Deployment "web" runs 2 replicas that each listen on 8080\/TCP/m);
  r = await runCli(['validate', '--runtime', 'containerd', '-f', file]);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /Warning/);
});
