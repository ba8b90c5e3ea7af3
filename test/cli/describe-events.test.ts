// `describe pod` shows the events of the pod it describes, matched by its UID as kubectl describe
// does: a pod deleted and created again under the same name starts with none of the old one's.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, stopRuntimeServices, tempDir } from '../fixtures/cli/cli-process.js';
import { manifestYaml, pod, shell } from '../fixtures/pods.js';

test('describe: the events of a deleted pod do not carry over to a new pod of the same name', async () => {
  const tmp = await tempDir();
  const root = join(tmp.path, 'root');
  const cli = (...args: string[]) => runCli([...args, '--root-dir', root]);
  const file = join(tmp.path, 'pod.yaml');
  try {
    writeFileSync(file, manifestYaml(pod('same', [shell('c', 'exit 1')], { terminationGracePeriodSeconds: 0 })));
    const crashed = await cli('up', '-d', '-f', file, '--timeout', '60s');
    assert.equal(crashed.code, 1, 'the first pod crash-loops');
    assert.match((await cli('describe', 'pod', 'same')).stdout, /Warning +BackOff/);
    assert.equal((await cli('down', '-f', file)).code, 0);

    writeFileSync(file, manifestYaml(pod('same', [shell('c', 'sleep 300')], { terminationGracePeriodSeconds: 0 })));
    const second = await cli('up', '-d', '-f', file);
    assert.equal(second.code, 0, second.stderr);
    const described = (await cli('describe', 'pod', 'same')).stdout;
    const events = described.slice(described.indexOf('Events:'));
    assert.match(events, /Normal +Started/);
    assert.doesNotMatch(events, /BackOff|exit 1/, events);
    // The old pod's events stay listed, as the API server keeps them until they expire.
    assert.match((await cli('get', 'events')).stdout, /BackOff/);
  } finally {
    await cli('down', '--all', '--agent', '--grace-period', '0');
    await stopRuntimeServices(tmp.path);
    await tmp.remove();
  }
});
