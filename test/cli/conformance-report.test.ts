// npm run conformance's report (scripts/conformance.mjs): what it makes of the runs' JUnit files and
// events per runtime: vacuous passes, tests of what a runtime cannot do, and the host-file tests the
// process runtime runs one at a time.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface GroupRun {
  name: string;
  focus: string;
  skip: string[];
  nodes: string;
  clearHostFiles?: boolean;
}
interface Group {
  name: string;
  focus: string;
  hostFileTests?: string[];
}
interface ConformanceScript {
  SETS: Record<string, Group[]>;
  groupRuns(group: Group, runtime: string): GroupRun[];
  report(baseDir: string, runtimes: string[]): string;
}

const root = new URL('../../../', import.meta.url);
const load = async () => (await import(new URL('scripts/conformance.mjs', root).href)) as ConformanceScript;

const TERMINATION =
  '[k8s.io] Container Runtime blackbox test on terminated container should report termination message [LinuxOnly] if TerminationMessagePath is set [NodeConformance]';
const PULL = '[k8s.io] Container Runtime blackbox test when running a container with a new image should be able to pull image [NodeConformance]';
const PROBE = '[k8s.io] Probing container should *not* be restarted with a exec "cat /tmp/health" liveness probe [NodeConformance] [Conformance]';
const EVICTED = '[sig-apps] StatefulSet [k8s.io] Basic StatefulSet functionality [StatefulSetBasic] Should recreate evicted statefulset [Conformance]';
const ROLLING =
  '[sig-apps] StatefulSet [k8s.io] Basic StatefulSet functionality [StatefulSetBasic] should perform rolling updates and roll backs of template modifications [Conformance]';
const HOOK =
  '[k8s.io] Container Lifecycle Hook when create a pod with lifecycle hook should execute poststart exec hook properly [NodeConformance] [Conformance]';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** One ginkgo JUnit test case: passed, or failed with a message; its output names its namespace. */
function testcase(name: string, ns: string, failure?: string): string {
  const out = `<system-out>STEP: Destroying namespace "${ns}" for this suite.</system-out>`;
  return `<testcase name="${esc(name)}" classname="Kubernetes e2e suite" time="3">${failure ? `<failure type="Failure">${esc(failure)}</failure>` : ''}${out}</testcase>`;
}

function writeRun(dir: string, cases: string[], events: string[]): void {
  const res = join(dir, 'results', '1');
  mkdirSync(res, { recursive: true });
  writeFileSync(join(res, 'junit_01.xml'), `<?xml version="1.0"?><testsuite name="Kubernetes e2e suite">${cases.join('')}</testsuite>`);
  writeFileSync(join(res, 'run.json'), JSON.stringify({ group: 'node', focus: 'x', seconds: 10 }));
  writeFileSync(join(dir, 'events.txt'), events.map((e) => `${e}\n`).join(''));
}

/** The table row of a test: its cells per runtime. */
function row(md: string, name: string): string[] {
  const line = md.split('\n').find((l) => l.startsWith(`| ${name.replace(/\|/g, '\\|')} |`));
  assert.ok(line, `a row for ${name}`);
  return line
    .split(' | ')
    .slice(1)
    .map((c) => c.replace(/ \|$/, ''));
}

test('report: a runtime limit fails visibly with its reason, a pass it makes vacuous fails, the other runtime is untouched', async () => {
  const { report } = await load();
  const base = mkdtempSync(join(tmpdir(), 'conformance-'));
  try {
    const cases = (failTermination: boolean) => [
      testcase(TERMINATION, 'container-runtime-1', failTermination ? 'Expected <string>: to equal <string>: DONE' : undefined),
      testcase(PULL, 'container-runtime-2'),
      testcase(HOOK, 'container-lifecycle-hook-3'),
    ];
    writeRun(
      join(base, 'containerd'),
      [
        ...cases(false),
        testcase(EVICTED, 'statefulset-4'),
        testcase(ROLLING, 'statefulset-5', 'Failed waiting for state update: timed out waiting for the condition'),
      ],
      ["statefulset-4   Pod   ss-0   NodePorts   Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"],
    );
    writeRun(join(base, 'process'), cases(true), [
      'container-lifecycle-hook-3   Pod   pod-handle-http-request   UnsupportedPodSpec   spec.containers[0].command: Required value',
    ]);
    const md = report(base, ['containerd', 'process']);
    assert.deepEqual(row(md, TERMINATION), ['pass', 'FAIL (runtime cannot)']);
    assert.deepEqual(row(md, PULL), ['pass', 'FAIL (vacuous)']);
    assert.deepEqual(row(md, HOOK), ['pass', 'FAIL (vacuous)']);
    assert.deepEqual(row(md, EVICTED), ['pass', '—'], 'a rejection that is the test is not vacuous');
    assert.deepEqual(row(md, ROLLING), ['FAIL (image not offline)', '—'], 'a test that needs more than the stand-in image has');
    assert.match(md, /roll backs of template modifications \[Conformance\]\*\*: cannot run offline: .*stand-in/);
    assert.match(md, /^\| containerd \| 5 \| 4 \| 1 \| 0 \| 0 \| 1 \| 0 \|$/m);
    assert.match(md, /^\| process \| 3 \| 0 \| 3 \| 2 \| 1 \| 0 \| 0 \|$/m);
    assert.match(md, /if TerminationMessagePath is set \[NodeConformance\]\*\*: the process runtime has no mount namespace: .*\(the test: Expected/);
    assert.match(md, /should be able to pull image \[NodeConformance\]\*\*: vacuous pass: the process runtime has no images/);
    assert.match(md, /\| node \| 3 \/ 3 \| 0 \/ 3 \|/);
    assert.match(md, /\| apps-network \| 1 \/ 2 \| — \|/);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('groupRuns: on the process runtime the host-file probe tests leave the parallel run and run alone, after the files are cleared', async () => {
  const { SETS, groupRuns } = await load();
  const probes = SETS.node?.[0];
  if (!probes?.hostFileTests?.some((t) => PROBE.startsWith(t))) assert.fail('the node set lists the probe test');

  const onContainerd = groupRuns(probes, 'containerd');
  assert.equal(onContainerd.length, 1);
  assert.deepEqual(onContainerd[0]?.skip, []);

  const onProcess = groupRuns(probes, 'process');
  assert.equal(onProcess.length, 1 + (probes.hostFileTests?.length ?? 0));
  const [parallel, ...alone] = onProcess;
  assert.ok(
    parallel?.skip.some((re) => new RegExp(re).test(PROBE)),
    'the parallel run skips it',
  );
  const own = alone.filter((r) => new RegExp(r.focus).test(PROBE));
  assert.equal(own.length, 1, 'one run of its own');
  assert.equal(own[0]?.nodes, '1');
  assert.equal(own[0]?.clearHostFiles, true);
  for (const r of alone) assert.ok(!new RegExp(r.focus).test(HOOK), `${r.name} selects only its test`);
});
