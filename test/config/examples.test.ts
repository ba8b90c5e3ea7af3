// Every manifest under examples/ validates cleanly, including the process runtime's rules, and
// no two examples listen on the same containerPort.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadManifests } from '../../src/config/load.js';
import { validateForProcessRuntime } from '../../src/runtime/process/validation.js';

const examples = fileURLToPath(new URL('../../../examples/', import.meta.url));
const files = readdirSync(examples)
  .filter((f) => /\.(ya?ml|json)$/.test(f))
  .sort();

test('there are at least ten example manifests', () => assert.ok(files.length >= 10, files.join(', ')));

for (const f of files) {
  test(`examples/${f} validates for the process runtime`, async () => {
    const m = await loadManifests([f], { cwd: examples, extraValidation: validateForProcessRuntime, nodeName: 'node-1' });
    assert.ok(m.pods.length >= 1);
  });
}

test('examples use distinct container ports', async () => {
  const m = await loadManifests(['.'], { cwd: examples, nodeName: 'node-1' });
  const ports = m.pods.flatMap((p) => [...p.spec!.containers, ...(p.spec!.initContainers ?? [])].flatMap((c) => (c.ports ?? []).map((x) => x.containerPort)));
  assert.equal(new Set(ports).size, ports.length, ports.join(', '));
});
