// The runtime up/run choose without --runtime: from the containers' commands and the host's problems.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from '../../src/api/types.js';
import type { ManifestObject } from '../../src/config/object-kinds.js';
import { chooseRuntime, manifestContainers } from '../../src/agent/runtime-choice.js';

const pod: Pod = { metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'x', command: ['run'] }] } };
const deployment: ManifestObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: { template: { spec: { initContainers: [{ name: 'init', image: 'i' }], containers: [{ name: 'nginx', image: 'nginx' }] } } },
};
const cronJob: ManifestObject = {
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name: 'nightly' },
  spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'job', image: 'j' }] } } } } },
};

test('manifestContainers: pods, workload templates and CronJob job templates, init containers first', () => {
  assert.deepEqual(
    manifestContainers([pod], [deployment, cronJob]).map((c) => c.where),
    ['pod/p: container a', 'deployment.apps/web: container init', 'deployment.apps/web: container nginx', 'cronjob.batch/nightly: container job'],
  );
});

test('chooseRuntime: nothing to choose while every container has a command', () => {
  assert.equal(chooseRuntime(manifestContainers([pod], []), []), undefined);
});

test('chooseRuntime: containerd for containers without command when the host can run it', () => {
  const c = chooseRuntime(manifestContainers([pod], [deployment]), []);
  assert.deepEqual(c, {
    runtime: 'containerd',
    why: "2 containers have no command (deployment.apps/web: container init, deployment.apps/web: container nginx): they run their images' entrypoints, on the containerd podvisor starts",
  });
});

test('chooseRuntime: the process runtime, with why containerd cannot run, when the host lacks it; long lists end with …', () => {
  const c = chooseRuntime(manifestContainers([], [deployment, cronJob, { ...deployment, metadata: { name: 'api' } }]), [
    'containerd is not on PATH (apt-get install containerd)',
  ]);
  assert.equal(c?.runtime, 'process');
  assert.equal(
    c?.why,
    '5 containers have no command (deployment.apps/web: container init, deployment.apps/web: container nginx, cronjob.batch/nightly: container job, …), and containerd cannot run here: containerd is not on PATH (apt-get install containerd)',
  );
});

test('chooseRuntime: both runtimes when pods of RuntimeClass process sit beside containers without command', () => {
  const dev: Pod = {
    metadata: { name: 'dev' },
    spec: { runtimeClassName: 'process', containers: [{ name: 'api', image: 'node', command: ['npm', 'run', 'dev'] }] },
  };
  assert.deepEqual(chooseRuntime(manifestContainers([dev], [deployment]), []), {
    runtime: 'process,containerd',
    why: "2 containers have no command (deployment.apps/web: container init, deployment.apps/web: container nginx): they run their images' entrypoints, on the containerd podvisor starts; 1 container of RuntimeClass process runs as a host process",
  });
  // Without containerd on the host the process runtime is left, as before.
  assert.equal(chooseRuntime(manifestContainers([dev], [deployment]), ['containerd is not on PATH'])?.runtime, 'process');
});
