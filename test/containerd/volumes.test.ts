// containerd: every volume kind as the container sees it — emptyDir (disk and tmpfs with its size
// limit), hostPath with its type check, configMap, secret (items, modes, optional), downwardAPI and
// projected — with readOnly and subPath mounts; the projected kinds following their sources while the
// pod runs; the managed /etc/hosts with hostAliases; subPathExpr; no_new_privs.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ConfigMap, Pod, Secret } from '../../src/api/types.js';
import { containerStatus, describe, eventsOf, makePod, statusOf, waitFor } from '../kubelet/harness.js';
import { skipReason, startContainerd, type ContainerdEnv } from './harness.js';
import { newContainerdHarness } from './kubelet.js';

const skip = await skipReason();
let env: ContainerdEnv;
let hostDir: string;
before(async () => {
  if (skip) return;
  env = await startContainerd();
  hostDir = mkdtempSync(join(tmpdir(), 'podvisor-hostpath-'));
});
after(async () => {
  await env?.stop();
  if (hostDir) rmSync(hostDir, { recursive: true, force: true });
});

const configMap: ConfigMap = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace: 'default' },
  data: { 'app.conf': 'level=debug', other: 'x' },
};
const secret: Secret = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'creds', namespace: 'default' },
  data: { password: Buffer.from('s3cret').toString('base64') },
};

test('each volume kind, readOnly and subPath, as the container sees them', { skip }, async () => {
  writeFileSync(join(hostDir, 'from-host.txt'), 'host file\n');
  const h = await newContainerdHarness(env, { configMaps: [configMap], secrets: [secret] });
  try {
    const script = [
      'exec > /dev/termination-log 2>&1',
      'set -e',
      'echo disk > /scratch/a && cat /scratch/a',
      "grep ' /mem tmpfs ' /proc/mounts | grep -o 'size=[0-9]*k'",
      'cat /host/from-host.txt && echo from-pod > /host/written-by-pod',
      'cat /cfg/renamed.conf; echo',
      'stat -L -c %a /cfg/renamed.conf',
      'cat /sec/password; echo; stat -L -c %a /sec/password',
      'ls /opt-sec | wc -l',
      'cat /info/labels; echo; cat /info/name; echo',
      'cat /all/app.conf; echo; cat /all/password; echo; cat /all/ns; echo',
      'if (echo x > /ro/x) 2>/dev/null; then echo ro-writable; else echo ro-refused; fi',
      'cat /sub/inner',
      'ls /scratch/nested',
    ].join('\n');
    const pod = makePod(
      'volumes',
      [
        {
          name: 'check',
          image: 'busybox',
          command: ['sh', '-c', script],
          volumeMounts: [
            { name: 'scratch', mountPath: '/scratch' },
            { name: 'mem', mountPath: '/mem' },
            { name: 'host', mountPath: '/host' },
            { name: 'cfg', mountPath: '/cfg' },
            { name: 'sec', mountPath: '/sec' },
            { name: 'opt-sec', mountPath: '/opt-sec' },
            { name: 'info', mountPath: '/info' },
            { name: 'all', mountPath: '/all' },
            { name: 'scratch', mountPath: '/ro', readOnly: true },
            { name: 'scratch', mountPath: '/sub', subPath: 'nested' },
          ],
        },
      ],
      {
        restartPolicy: 'Never',
        initContainers: [
          {
            name: 'prepare',
            image: 'busybox',
            command: ['sh', '-c', 'mkdir -p /scratch/nested && echo in-subpath > /scratch/nested/inner'],
            volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
          },
        ],
        volumes: [
          { name: 'scratch', emptyDir: {} },
          { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '8Mi' } },
          { name: 'host', hostPath: { path: hostDir, type: 'Directory' } },
          { name: 'cfg', configMap: { name: 'settings', items: [{ key: 'app.conf', path: 'renamed.conf', mode: 0o600 }] } },
          { name: 'sec', secret: { secretName: 'creds', defaultMode: 0o400 } },
          { name: 'opt-sec', secret: { secretName: 'absent', optional: true } },
          {
            name: 'info',
            downwardAPI: {
              items: [
                { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
                { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
              ],
            },
          },
          {
            name: 'all',
            projected: {
              sources: [
                { configMap: { name: 'settings', items: [{ key: 'app.conf', path: 'app.conf' }] } },
                { secret: { name: 'creds' } },
                { downwardAPI: { items: [{ path: 'ns', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
              ],
            },
          },
        ],
      },
    );
    pod.metadata!.labels = { app: 'vol' };
    h.kubelet.startPod(pod);
    await waitFor(
      () => `the pod Succeeded or Failed: ${describe(h, pod)}`,
      () => ['Succeeded', 'Failed'].includes(statusOf(h, pod)?.phase ?? ''),
      60_000,
    );
    const t = containerStatus(h, pod, 'check')!.state!.terminated!;
    assert.equal(t.exitCode, 0, describe(h, pod));
    assert.equal(
      t.message,
      [
        'disk',
        'size=8192k',
        'host file',
        'level=debug',
        '600',
        's3cret',
        '400',
        '0',
        'app="vol"',
        'volumes',
        'level=debug',
        's3cret',
        'default',
        'ro-refused',
        'in-subpath',
        'inner',
        '',
      ].join('\n'),
    );
    assert.equal(readFileSync(join(hostDir, 'written-by-pod'), 'utf8'), 'from-pod\n');
  } finally {
    await h.close();
  }
});

test('a hostPath that fails its type check: FailedMount, nothing starts', { skip }, async () => {
  const h = await newContainerdHarness(env);
  try {
    const pod = makePod('bad-volume', [{ name: 'app', image: 'busybox', command: ['sleep', '3600'], volumeMounts: [{ name: 'f', mountPath: '/f' }] }], {
      volumes: [{ name: 'f', hostPath: { path: join(hostDir, 'from-host.txt'), type: 'Directory' } }],
    });
    h.kubelet.startPod(pod);
    const ev = await waitFor(
      () => `a FailedMount event: ${describe(h, pod)}`,
      () => eventsOf(h, pod, 'FailedMount')[0],
    );
    assert.equal(ev.message, `MountVolume.SetUp failed for volume "f" : hostPath type check failed: ${join(hostDir, 'from-host.txt')} is not a directory`);
    assert.equal(containerStatus(h, pod, 'app')?.state?.running, undefined);
  } finally {
    await h.close();
  }
});

/** What `sh -c script` prints in the pod's container (CRI ExecSync). */
async function execIn(h: Awaited<ReturnType<typeof newContainerdHarness>>, pod: Pod, container: string, script: string): Promise<string> {
  const id = containerStatus(h, pod, container)?.containerID?.replace(/^[a-z]+:\/\//, '');
  if (!id) return '';
  const r = await h.runtime.execSync(id, ['sh', '-c', script], 10);
  return Buffer.from(r.stdout).toString('utf8') + Buffer.from(r.stderr).toString('utf8');
}

test(
  'configMap, optional configMap and downward API files follow their sources; /etc/hosts with hostAliases; subPathExpr; no_new_privs',
  { skip },
  async () => {
    const configMaps: ConfigMap[] = [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'live', namespace: 'default' }, data: { key: 'value-1' } }];
    const h = await newContainerdHarness(env, { configMaps, resyncIntervalMs: 500 });
    try {
      const pod = makePod(
        'volumes-live',
        [
          {
            name: 'app',
            image: 'busybox',
            command: ['sleep', '3600'],
            env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
            securityContext: { allowPrivilegeEscalation: false },
            volumeMounts: [
              { name: 'cfg', mountPath: '/cfg' },
              { name: 'later', mountPath: '/later' },
              { name: 'info', mountPath: '/info' },
              { name: 'all', mountPath: '/all' },
              { name: 'scratch', mountPath: '/scratch' },
              { name: 'scratch', mountPath: '/expanded', subPathExpr: '$(POD_NAME)' },
            ],
          },
          { name: 'plain', image: 'busybox', command: ['sleep', '3600'] },
        ],
        {
          terminationGracePeriodSeconds: 1,
          hostAliases: [{ ip: '123.45.67.89', hostnames: ['foo.example', 'bar'] }],
          volumes: [
            { name: 'cfg', configMap: { name: 'live' } },
            { name: 'later', configMap: { name: 'created-later', optional: true } },
            { name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
            {
              name: 'all',
              projected: {
                sources: [
                  { configMap: { name: 'live', items: [{ key: 'key', path: 'cm/key' }] } },
                  { downwardAPI: { items: [{ path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' } }] } },
                ],
              },
            },
            { name: 'scratch', emptyDir: {} },
          ],
        },
      );
      pod.metadata!.labels = { app: 'one' };
      pod.metadata!.annotations = { builder: 'foo' };
      h.kubelet.startPod(pod);
      await waitFor(
        () => `both containers running: ${describe(h, pod)}`,
        () => ['app', 'plain'].every((c) => containerStatus(h, pod, c)?.state?.running),
        60_000,
      );
      const podIP = statusOf(h, pod)!.podIP!;
      assert.equal(
        await execIn(h, pod, 'app', 'cat /cfg/key /all/cm/key; echo; cat /info/labels; echo; cat /all/annotations; echo; ls /later | wc -l'),
        'value-1value-1\napp="one"\nbuilder="foo"\n0\n',
      );
      assert.equal(await execIn(h, pod, 'app', 'readlink /cfg/key; readlink /cfg/..data | cut -c1-2'), '..data/key\n..\n', 'the atomic writer’s layout');

      const hosts = await execIn(h, pod, 'app', 'cat /etc/hosts');
      assert.match(hosts, /^# Kubernetes-managed hosts file\.\n127\.0\.0\.1\tlocalhost\n/);
      assert.ok(hosts.includes(`${podIP}\tvolumes-live\n`), hosts);
      assert.ok(hosts.endsWith('\n# Entries added by HostAliases.\n123.45.67.89\tfoo.example\tbar\n'), hosts);

      assert.equal(
        await execIn(h, pod, 'app', 'echo hi > /expanded/f && cat /scratch/volumes-live/f'),
        'hi\n',
        'subPathExpr expanded with the container’s env',
      );
      assert.equal(await execIn(h, pod, 'app', "grep '^NoNewPrivs' /proc/self/status | tr -d ' \\t'"), 'NoNewPrivs:1\n');
      assert.equal(await execIn(h, pod, 'plain', "grep '^NoNewPrivs' /proc/self/status | tr -d ' \\t'"), 'NoNewPrivs:0\n');

      // The sources change: the running container sees the new files, without a restart.
      configMaps[0] = { ...configMaps[0]!, data: { key: 'value-2' } };
      configMaps.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'created-later', namespace: 'default' }, data: { 'data-1': 'here' } });
      h.kubelet.updatePod({ ...pod, metadata: { ...pod.metadata!, labels: { app: 'two' }, annotations: { builder: 'bar' } } });
      const want = 'value-2value-2\napp="two"\nbuilder="bar"\nhere\n';
      let seen = '';
      await waitFor(
        () => `the volumes updated (last seen ${JSON.stringify(seen)})`,
        async () =>
          (seen = await execIn(
            h,
            pod,
            'app',
            'cat /cfg/key /all/cm/key; echo; cat /info/labels; echo; cat /all/annotations; echo; cat /later/data-1; echo',
          )) === want,
        30_000,
      );
      assert.equal(containerStatus(h, pod, 'app')?.restartCount, 0);
    } finally {
      await h.close();
    }
  },
);
