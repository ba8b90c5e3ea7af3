#!/usr/bin/env node
// npm run conformance: Kubernetes' own e2e tests (e2e.test 1.20) against a cluster whose node is
// podvisor, through the kube-e2e tool, on each runtime; then docs/conformance.md from the runs' JUnit
// files: every selected test with pass/fail per runtime, the reason of each failure, the tests that
// cannot run offline, and no vacuous passes (a test whose pod the node rejected, or whose pod stayed
// Pending with sandbox errors, counts as failed).
//
//   node scripts/conformance.mjs [--runtime=containerd,process] [--set=node,wide,apps-network|ci] [--group=TEXT]
//                                [--focus=REGEX] [--report-only] [--out=FILE] [--fail-on-failure] [--if-available]
//
// --group runs only the groups of the sets whose name contains TEXT, and --focus=REGEX only the tests
// it selects (a rerun of some tests): the report keeps the earlier runs, and each test's latest result.
//
// Environment: KUBE_E2E (the tool's dir; default ../shared/tools/kube-e2e beside the project),
// CONFORMANCE_DIR (where the clusters and their results live; default ~/.cache/podvisor-conformance),
// CONFORMANCE_PORT (API server port, default 16643; the tool uses PORT..PORT+10), E2E_NODES (ginkgo
// processes, default 4), and the tool's own (E2E_CACHE, KCP_CACHE). Without the tool it says so and
// exits 0 with --if-available, 1 otherwise.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, createWriteStream } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The selected sets: a ginkgo focus each, with what it covers. */
export const SETS = {
  // The five node areas of test/e2e/common, everything they hold that these machines can run.
  node: [
    {
      name: 'probes, hooks, init containers, container runtime',
      focus: String.raw`\[k8s\.io\] (Probing container|Container Lifecycle Hook|InitContainer|Container Runtime) `,
      hostFileTests: [
        '[k8s.io] Probing container should be restarted with a exec "cat /tmp/health" liveness probe',
        '[k8s.io] Probing container should *not* be restarted with a exec "cat /tmp/health" liveness probe',
        '[k8s.io] Probing container should be restarted by liveness probe after startup probe enables it',
        '[k8s.io] Probing container should not be ready until startupProbe succeeds',
      ],
    },
    { name: 'pods', focus: String.raw`\[k8s\.io\] Pods ` },
  ],
  // The [NodeConformance] and [Conformance] tests of the other node areas.
  wide: [
    {
      name: 'env, downward API, config, secrets, volumes, security, kubelet',
      focus: String.raw`(\[k8s\.io\] (Variable Expansion|Security Context|Kubelet|\[sig-node\] (PreStop|Pods Extended)) |\[sig-node\] (ConfigMap|Downward API|Secrets) |\[sig-storage\] (ConfigMap|Downward API volume|EmptyDir volumes|Projected [a-zA-Z]+|Secrets) |\[sig-api-machinery\] Secrets ).*\[(Node)?Conformance\]`,
    },
  ],
  // The [Conformance] tests of sig-apps (the cluster's controller-manager runs the workloads, podvisor
  // is their node) and those of sig-network that need only the pod network, Services and Endpoints
  // objects, the API server's proxy and the pod's DNS config: the cluster runs no kube-proxy and no
  // cluster DNS (NOT_SELECTED lists the others, with why).
  'apps-network': [
    {
      name: 'workloads (sig-apps)',
      focus: String.raw`\[sig-apps\] .*\[Conformance\]`,
    },
    {
      // 1.20 tags every DaemonSet [Conformance] test [Serial]: they run alone, one after another.
      name: 'daemon sets, one at a time (sig-apps)',
      focus: String.raw`\[sig-apps\] Daemon set \[Serial\] .*\[Conformance\]`,
      serial: true,
    },
    {
      name: 'pod network, endpoints, proxy (sig-network)',
      focus: String.raw`\[sig-network\] (Networking Granular Checks: Pods |Services should (provide secure master service|find a service from listing all namespaces|test the lifecycle of an Endpoint|serve a basic endpoint from pods|serve multiport endpoints from pods)|Service endpoints latency |Proxy version v1 should proxy through a service and a pod|DNS should support configurable pod DNS nameservers).*\[Conformance\]`,
    },
  ],
  // What CI runs: short tests only (no multi-minute observation windows).
  ci: [
    {
      name: 'a short node set',
      focus: String.raw`\[k8s\.io\] (InitContainer \[NodeConformance\] should invoke init containers on a RestartNever pod|Container Runtime blackbox test on terminated container should report termination message .*FallbackToLogsOnError|Pods should get a host IP|Pods should be submitted and removed) `,
    },
  ],
};

/**
 * Runtimes whose containers are host processes, without a mount namespace: their /tmp is the host's.
 * A group's hostFileTests (pods that write, read and remove fixed files there) run on them one at a
 * time, each after HOST_FILES are removed, instead of beside each other in the group's parallel run,
 * where one test's file satisfies or breaks another's probe (and a file left by an earlier run does).
 */
const HOST_PROCESS_RUNTIMES = new Set(['process']);
export const HOST_FILES = ['/tmp/health', '/tmp/startup'];

/**
 * What a runtime cannot do by design, and the tests that need it: they count as failed there, with
 * this reason (a pass that cannot have exercised the feature is a vacuous one).
 */
export const RUNTIME_LIMITS = [
  {
    runtime: 'process',
    test: /Container Runtime blackbox test on terminated container should report termination message \[LinuxOnly\] (if TerminationMessagePath is set|from file when)/,
    reason:
      "no mount namespace: the container's /dev/termination-log is the host's, which podvisor never reads (each container's message file is named in PODVISOR_TERMINATION_MESSAGE_PATH); as non-root the container cannot even create the file in the host's /dev",
  },
  {
    runtime: 'process',
    test: /Container Runtime blackbox test when running a container with a new image should (not )?be able to pull image/,
    reason: 'no images: an image only names what runs, nothing is pulled, so a bad image is never refused and a pull is never shown',
  },
];

/**
 * Tests that need more of an upstream image than kube-e2e's offline stand-in has: they fail for want
 * of the image, as a test whose image is missing does.
 */
export const STAND_IN_LIMITS = [
  {
    test: /\[sig-apps\] StatefulSet .*should perform rolling updates and roll backs of template modifications/,
    image: 'library/httpd:2.4.38-alpine',
    reason:
      "the test breaks a pod's readiness by moving /usr/local/apache2/htdocs/index.html away; the offline stand-in (busybox httpd) serves /htdocs, so the probe never fails",
  },
  {
    test: /\[sig-network\] Networking Granular Checks: Pods should function for node-pod communication: udp/,
    image: 'e2e-test-images/agnhost:2.21',
    reason: "the test sends its UDP probes with the image's `nc -u`; the offline agnhost is built on Debian's busybox, whose nc has no -u",
  },
];

/** Tests that need more nodes than the kube-e2e cluster has (one, podvisor): they fail, with this reason. */
export const CLUSTER_LIMITS = [
  {
    test: /\[sig-apps\] Daemon set \[Serial\] should rollback without unnecessary restarts/,
    reason: 'the test needs a cluster of at least 2 nodes (it checks so first); the kube-e2e cluster has one',
  },
];

/** The [Conformance] tests of sig-apps and sig-network the apps-network set leaves out, and why. */
export const NOT_SELECTED = [
  {
    tests: String.raw`[sig-network] Services: ClusterIP, NodePort and ExternalName traffic, session affinity, type changes`,
    reason: 'they reach pods through Service IPs and node ports: the cluster runs no kube-proxy (a node agent does not proxy Services)',
  },
  {
    tests: String.raw`[sig-network] DNS: the tests of cluster names, services, pods, hostnames, /etc/hosts entries`,
    reason: 'the cluster runs no DNS server, and the queriers use the jessie-dnsutils image, not in the local registry',
  },
  { tests: String.raw`[sig-network] Ingress API, IngressClass API`, reason: 'API objects only: the API server alone answers them, the node has no part' },
  { tests: String.raw`[sig-apps] CronJob`, reason: 'none is [Conformance] in 1.20 (the first came with 1.21)' },
];

/** Tests that need the internet (real gcr.io credentials): never passing offline, skipped and listed. */
export const OFFLINE_SKIP = String.raw`private registry`;
const DEFAULT_SKIP = String.raw`\[Serial\]|\[Slow\]|\[Disruptive\]|\[Flaky\]|\[Feature:`;
/** A serial group's: its [Serial] tests run, with one ginkgo process. */
const SERIAL_SKIP = String.raw`\[Slow\]|\[Disruptive\]|\[Flaky\]|\[Feature:`;

/** Event reasons that mean a test's pod never ran as the test meant: admission rejections, sandbox failures, a port wait. */
const REJECTION_REASONS = new Set([
  'NodePorts',
  'UnsupportedPodSpec',
  'OutOfcpu',
  'OutOfmemory',
  'OutOfpods',
  'UnexpectedAdmissionError',
  'NodeAffinity',
  'HostPortInUse',
]);
const SANDBOX_FAILURE = 'FailedCreatePodSandBox';
/**
 * Tests whose subject is the node refusing a pod: a StatefulSet pod that asks for a host port
 * another pod holds is rejected (NodePorts), recreated and rejected until the port is free.
 */
const REJECTION_IS_THE_TEST = [/\[sig-apps\] StatefulSet .*Should recreate evicted statefulset/];

function parseArgs(argv) {
  const o = {
    runtimes: ['containerd', 'process'],
    sets: ['node', 'wide'],
    reportOnly: false,
    ifAvailable: false,
    failOnFailure: false,
    out: join(root, 'docs', 'conformance.md'),
    group: undefined,
    focus: undefined,
  };
  for (const a of argv) {
    const [k, v] = a.replace(/^--/, '').split('=');
    if (k === 'runtime') o.runtimes = v.split(',');
    else if (k === 'set') o.sets = v.split(',');
    else if (k === 'report-only') o.reportOnly = true;
    else if (k === 'if-available') o.ifAvailable = true;
    else if (k === 'fail-on-failure') o.failOnFailure = true;
    else if (k === 'group') o.group = v;
    else if (k === 'focus') o.focus = v;
    else if (k === 'out') o.out = resolve(v);
    else {
      console.error(`conformance: unknown argument ${a}`);
      process.exit(2);
    }
  }
  for (const s of o.sets) if (!SETS[s]) (console.error(`conformance: unknown set ${s} (${Object.keys(SETS).join(', ')})`), process.exit(2));
  return o;
}

function run(cmd, args, opts = {}) {
  return new Promise((resolvePromise) => {
    const child = spawn(cmd, args, { stdio: opts.stdio ?? 'inherit', env: { ...process.env, ...opts.env }, cwd: opts.cwd ?? root });
    child.on('exit', (code, signal) => resolvePromise(code ?? (signal ? 128 : 1)));
    child.on('error', () => resolvePromise(127));
  });
}

/** A shell-sourceable KEY='value' file as an object. */
function readEnvFile(path) {
  const env = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const m = /^(?:export )?(\w+)=(['"]?)(.*)\2$/.exec(line.trim());
    if (m) env[m[1]] = m[3];
  }
  return env;
}

/**
 * Watches the cluster's events while the tests run (the tests delete their namespaces, and their
 * events with them): one line per event, namespace, kind, name, reason, message.
 */
function watchEvents(env, file) {
  const out = createWriteStream(file, { flags: 'a' });
  const child = spawn(
    env.E2E_KUBECTL,
    [
      '--kubeconfig',
      env.E2E_KUBECONFIG,
      'get',
      'events',
      '--all-namespaces',
      '--watch',
      '--no-headers',
      '-o',
      'custom-columns=NS:.involvedObject.namespace,KIND:.involvedObject.kind,NAME:.involvedObject.name,REASON:.reason,MESSAGE:.message',
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  child.stdout.pipe(out);
  return () => {
    child.kill('SIGTERM');
    out.end();
  };
}

/** A ginkgo regex matching exactly this text. */
const literal = (text) => text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');

/**
 * The e2e runs of a group on a runtime: the group's focus with its parallel processes, and on a
 * host-process runtime its hostFileTests apart, one by one, each after the shared host files are gone.
 */
export function groupRuns(group, runtime) {
  const nodes = group.serial ? '1' : (process.env.E2E_NODES ?? '4');
  const isolated = HOST_PROCESS_RUNTIMES.has(runtime) ? (group.hostFileTests ?? []) : [];
  const runs = [{ name: group.name, focus: group.focus, skip: isolated.map(literal), nodes, baseSkip: group.serial ? SERIAL_SKIP : DEFAULT_SKIP }];
  for (const test of isolated) {
    runs.push({
      name: `${group.name}: ${test.replace(/^\[k8s\.io\] /, '')}, alone`,
      focus: literal(test),
      skip: [],
      nodes: '1',
      baseSkip: DEFAULT_SKIP,
      clearHostFiles: true,
    });
  }
  return runs;
}

async function runRuntime(tool, runtime, sets, baseDir, groupFilter, focusOverride) {
  const dir = join(baseDir, runtime);
  mkdirSync(dir, { recursive: true });
  const port = Number(process.env.CONFORMANCE_PORT ?? 16643);
  const env = { PODVISOR: root, E2E_RUNTIME: runtime, E2E_KUBELET_PORT: process.env.E2E_KUBELET_PORT ?? '10350' };
  console.error(`conformance: ${runtime}: starting the cluster in ${dir}`);
  const t0 = Date.now();
  if ((await run(join(tool, 'start'), [dir, String(port)], { env })) !== 0) {
    await run(join(tool, 'stop'), [dir], { env });
    throw new Error(`${runtime}: the cluster did not start (see ${dir})`);
  }
  const stopWatch = watchEvents(readEnvFile(join(dir, 'env')), join(dir, 'events.txt'));
  try {
    for (const set of sets) {
      for (const group of SETS[set]) {
        for (const planned of groupRuns(group, runtime)) {
          if (groupFilter && !planned.name.includes(groupFilter)) continue;
          const r = focusOverride ? { ...planned, focus: focusOverride } : planned;
          if (r.clearHostFiles) for (const f of HOST_FILES) rmSync(f, { force: true });
          const started = Date.now();
          console.error(`conformance: ${runtime}: ${r.name}`);
          await run(join(tool, 'run'), [dir, r.focus, '--ginkgo.reportPassed'], {
            env: { E2E_NODES: r.nodes, E2E_SKIP: [r.baseSkip, OFFLINE_SKIP, ...r.skip].join('|') },
          });
          const latest = latestResults(dir).at(-1);
          if (latest)
            writeFileSync(
              join(latest, 'run.json'),
              JSON.stringify({ runtime, set, group: r.name, focus: r.focus, seconds: Math.round((Date.now() - started) / 1000) }),
            );
        }
      }
    }
  } finally {
    stopWatch();
    await run(join(tool, 'stop'), [dir], { env });
  }
  console.error(`conformance: ${runtime}: done in ${Math.round((Date.now() - t0) / 1000)} s`);
}

function latestResults(dir) {
  const base = join(dir, 'results');
  if (!existsSync(base)) return [];
  return readdirSync(base)
    .filter((n) => /^\d+$/.test(n))
    .sort((a, b) => Number(a) - Number(b))
    .map((n) => join(base, n));
}

// --- JUnit ---

function decodeXml(s) {
  return s
    .replace(/&#x([0-9a-f]+);/gi, (_, h) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d) => String.fromCodePoint(Number(d)))
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function attr(tag, name) {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return m ? decodeXml(m[1]) : undefined;
}

/** The test cases of a ginkgo JUnit file: name, state, seconds, failure message, captured output. */
export function parseJUnit(xml) {
  const cases = [];
  const re = /<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g;
  for (let m; (m = re.exec(xml));) {
    const body = m[3] ?? '';
    const failure = /<(failure|error)\b([^>]*)>([\s\S]*?)<\/\1>|<(failure|error)\b([^>]*)\/>/.exec(body);
    const skipped = /<skipped\b/.test(body);
    const passed = /<passed>([\s\S]*?)<\/passed>/.exec(body);
    const systemOut = /<system-out>([\s\S]*?)<\/system-out>/.exec(body);
    cases.push({
      name: attr(m[1], 'name') ?? '',
      seconds: Number(attr(m[1], 'time') ?? 0),
      state: failure ? 'fail' : skipped ? 'skip' : 'pass',
      failure: failure ? decodeXml(failure[3] ?? '') || attr(failure[2] ?? failure[5] ?? '', 'message') || '' : undefined,
      output: decodeXml(passed?.[1] ?? systemOut?.[1] ?? ''),
    });
  }
  return cases;
}

/** The namespaces a test's output says it made (the framework destroys each by name at the end). */
function namespacesOf(output) {
  return [...output.matchAll(/Destroying namespace "([^"]+)" for this suite/g)].map((m) => m[1]);
}

/** What the event watch saw per namespace: rejections and sandbox failures of pods that never started. */
function vacuousReasons(eventsFile) {
  const byNs = new Map();
  if (!existsSync(eventsFile)) return byNs;
  const started = new Set();
  const sandboxFailed = new Map();
  for (const line of readFileSync(eventsFile, 'utf8').split('\n')) {
    const [ns, kind, name, reason, ...rest] = line.trim().split(/\s+/);
    if (!ns || kind !== 'Pod') continue;
    const message = rest.join(' ');
    const key = `${ns}/${name}`;
    if (reason === 'Started') started.add(key);
    if (REJECTION_REASONS.has(reason)) add(byNs, ns, `pod ${name} ${reason}: ${message}`);
    if (reason === SANDBOX_FAILURE && !sandboxFailed.has(key)) sandboxFailed.set(key, message);
  }
  for (const [key, message] of sandboxFailed) {
    if (started.has(key)) continue;
    const [ns, name] = key.split('/');
    add(byNs, ns, `pod ${name} never started, ${SANDBOX_FAILURE}: ${message}`);
  }
  return byNs;
}

/**
 * Images the local registry does not hold, per namespace, from the pull failures the event watch saw:
 * a failed test whose pods needed one cannot run offline (kube-e2e builds only busybox, agnhost,
 * pause and the web stand-ins).
 */
function missingImages(eventsFile) {
  const byNs = new Map();
  if (!existsSync(eventsFile)) return byNs;
  for (const line of readFileSync(eventsFile, 'utf8').split('\n')) {
    const [ns, kind, , reason, ...rest] = line.trim().split(/\s+/);
    if (!ns || kind !== 'Pod' || reason !== 'Failed') continue;
    const m = /^Failed to pull image "([^"]+)": .*(?:NotFound|not found)/.exec(rest.join(' '));
    if (m) add(byNs, ns, m[1].replace(/^[^/]+\//, ''));
  }
  return byNs;
}

function add(map, key, value) {
  const list = map.get(key) ?? [];
  if (!list.includes(value)) list.push(value);
  map.set(key, list);
}

/** A runtime's limit that a test needs, if any (RUNTIME_LIMITS). */
function limitOf(runtime, name) {
  return RUNTIME_LIMITS.find((l) => l.runtime === runtime && l.test.test(name));
}

/**
 * Every test of a runtime's runs, the latest result of each, with vacuous passes turned into
 * failures and the failures a runtime's limit explains given that reason.
 */
export function collect(dir, runtime = basename(dir)) {
  const tests = new Map();
  const runs = [];
  const vacuous = vacuousReasons(join(dir, 'events.txt'));
  const missing = missingImages(join(dir, 'events.txt'));
  for (const res of latestResults(dir)) {
    const files = readdirSync(res).filter((f) => /^junit_.*\.xml$/.test(f));
    if (files.length === 0) continue;
    const meta = existsSync(join(res, 'run.json')) ? JSON.parse(readFileSync(join(res, 'run.json'), 'utf8')) : { group: res };
    runs.push({ ...meta, dir: res, when: statSync(res).mtime.toISOString() });
    for (const f of files) {
      for (const c of parseJUnit(readFileSync(join(res, f), 'utf8'))) {
        if (c.state === 'skip') continue;
        const reasons = REJECTION_IS_THE_TEST.some((re) => re.test(c.name)) ? [] : namespacesOf(c.output).flatMap((ns) => vacuous.get(ns) ?? []);
        const result = { state: c.state, seconds: c.seconds, reason: c.state === 'fail' ? firstLines(c.failure ?? '') : '', vacuous: reasons };
        if (c.state === 'pass' && reasons.length > 0) {
          result.state = 'fail';
          result.reason = `vacuous pass: ${reasons[0]}`;
        } else if (reasons.length > 0) {
          // The node refused its pod: that, rather than what the test saw next, is why it failed.
          result.reason = `its pod never ran: ${reasons[0]} (the test: ${result.reason})`;
        }
        const images = namespacesOf(c.output).flatMap((ns) => missing.get(ns) ?? []);
        if (c.state === 'fail' && images.length > 0) {
          // Its pod never ran for want of an image: that, not a rejection or sandbox error on the way, is why.
          result.vacuous = [];
          result.offlineImages = [...new Set(images)];
          result.reason = `cannot run offline: the local registry has no ${result.offlineImages.join(', ')}`;
        }
        const standIn = STAND_IN_LIMITS.find((l) => l.test.test(c.name));
        if (c.state === 'fail' && standIn) {
          result.vacuous = [];
          result.offlineImages = [`${standIn.image} (a stand-in)`];
          result.reason = `cannot run offline: ${standIn.reason}`;
        }
        const clusterLimit = CLUSTER_LIMITS.find((l) => l.test.test(c.name));
        if (c.state === 'fail' && clusterLimit) {
          result.clusterLimit = clusterLimit.reason;
          result.reason = `one node: ${clusterLimit.reason}`;
        }
        const limit = limitOf(runtime, c.name);
        if (limit && result.state === 'pass') {
          result.state = 'fail';
          result.vacuous = [limit.reason];
          result.reason = `vacuous pass: the ${runtime} runtime has ${limit.reason}`;
        } else if (limit && !result.offlineImages) {
          result.limit = limit.reason;
          result.reason = `the ${runtime} runtime has ${limit.reason} (the test: ${result.reason})`;
        }
        tests.set(c.name, result);
      }
    }
  }
  return { tests, runs };
}

function firstLines(s) {
  const text = s
    .replace(/\s+/g, ' ')
    .replace(/\/[^\s]*\/(test|vendor)\/[^\s]*\.go:\d+/g, '')
    .trim();
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}

/** Tests listed but never run here: they cannot pass offline. */
function offlineTests(dir) {
  const names = new Set();
  for (const res of latestResults(dir)) {
    for (const f of readdirSync(res).filter((n) => /^junit_.*\.xml$/.test(n))) {
      for (const c of parseJUnit(readFileSync(join(res, f), 'utf8'))) if (c.state === 'skip' && new RegExp(OFFLINE_SKIP).test(c.name)) names.add(c.name);
    }
  }
  return names;
}

const cell = (r) =>
  !r
    ? '—'
    : r.state === 'pass'
      ? 'pass'
      : r.vacuous.length
        ? 'FAIL (vacuous)'
        : r.offlineImages
          ? 'FAIL (image not offline)'
          : r.limit
            ? 'FAIL (runtime cannot)'
            : r.clusterLimit
              ? 'FAIL (one-node cluster)'
              : 'FAIL';
const md = (s) => s.replace(/\|/g, '\\|');

export function report(baseDir, runtimes) {
  const data = Object.fromEntries(runtimes.map((rt) => [rt, collect(join(baseDir, rt), rt)]));
  const names = [...new Set(runtimes.flatMap((rt) => [...data[rt].tests.keys()]))].sort();
  const offline = new Set(runtimes.flatMap((rt) => [...offlineTests(join(baseDir, rt))]));
  const lines = [
    '# Conformance: upstream e2e tests with podvisor as the node',
    '',
    "Generated by `npm run conformance` (scripts/conformance.mjs) from the JUnit files of the runs below: Kubernetes' own",
    '`e2e.test` (v1.20.2) against a real kube-apiserver, scheduler and controller-manager whose only node is podvisor.',
    'Do not edit by hand. A test whose pod the node rejected at admission, or whose pod never started after sandbox',
    'errors, counts as failed even when the test itself passed ("vacuous"); so does a test of what the runtime cannot',
    'do by design ("runtime cannot": the process runtime has no images and no mount namespace).',
    '',
    '## Summary',
    '',
    '| runtime | tests run | pass | fail | of which vacuous | of which the runtime cannot do by design | of which need an image not available offline | of which need a second node |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const rt of runtimes) {
    const all = [...data[rt].tests.values()];
    const failed = all.filter((r) => r.state === 'fail');
    lines.push(
      `| ${rt} | ${all.length} | ${all.filter((r) => r.state === 'pass').length} | ${failed.length} | ${failed.filter((r) => r.vacuous.length).length} | ${failed.filter((r) => r.limit).length} | ${failed.filter((r) => r.offlineImages).length} | ${failed.filter((r) => r.clusterLimit).length} |`,
    );
  }
  lines.push(
    '',
    'Per set (a test counts in the first set whose focus selects it):',
    '',
    `| set | ${runtimes.map((rt) => `${rt} pass / run`).join(' | ')} |`,
    `|---|${runtimes.map(() => '---').join('|')}|`,
  );
  const reportSets = Object.keys(SETS).filter((k) => k !== 'ci');
  const setOf = (name) => reportSets.find((set) => SETS[set].some((g) => new RegExp(g.focus).test(name)));
  for (const set of reportSets) {
    const counts = runtimes.map((rt) => {
      const inSet = [...data[rt].tests].filter(([n]) => setOf(n) === set);
      return inSet.length ? `${inSet.filter(([, r]) => r.state === 'pass').length} / ${inSet.length}` : '—';
    });
    lines.push(`| ${set} | ${counts.join(' | ')} |`);
  }
  lines.push('', '## Runs', '', '| runtime | set | focus | wall time | results |', '|---|---|---|---|---|');
  for (const rt of runtimes) {
    for (const r of data[rt].runs) lines.push(`| ${rt} | ${md(r.group ?? '')} | \`${md(r.focus ?? '')}\` | ${r.seconds ?? '?'} s | ${r.when} |`);
  }
  lines.push('', '## Every selected test', '', `| test | ${runtimes.join(' | ')} |`, `|---|${runtimes.map(() => '---').join('|')}|`);
  for (const n of names) lines.push(`| ${md(n)} | ${runtimes.map((rt) => cell(data[rt].tests.get(n))).join(' | ')} |`);
  lines.push('', '## Failures and their reasons', '');
  for (const rt of runtimes) {
    const failed = [...data[rt].tests].filter(([, r]) => r.state === 'fail');
    lines.push(`### ${rt}`, '', failed.length ? '' : 'None.');
    for (const [n, r] of failed) lines.push(`- **${md(n)}**: ${md(r.reason)}`);
    lines.push('');
  }
  lines.push('## Not selected', '', 'The apps-network set leaves out these tests of the suite:', '');
  for (const n of NOT_SELECTED) lines.push(`- ${md(n.tests)}: ${md(n.reason)}.`);
  lines.push('');
  lines.push('## Not run: they cannot pass offline', '');
  lines.push(
    'Skipped by the run (`--ginkgo.skip` adds `private registry`): they pull from gcr.io with real credentials.',
    '',
    ...(offline.size ? [...offline].sort().map((n) => `- ${md(n)}`) : ['- (none selected by the focuses run)']),
    '',
  );
  const imageless = runtimes.flatMap((rt) =>
    [...data[rt].tests].filter(([, r]) => r.offlineImages).map(([n, r]) => `- ${md(n)} (${rt}: ${r.offlineImages.join(', ')})`),
  );
  if (imageless.length) {
    lines.push(
      'Run, and failed because an image they pull is not in the local registry, or is there only as a stand-in without what the test uses (counted as failures above):',
      '',
      ...imageless,
      '',
    );
  }
  return lines.join('\n');
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const baseDir = process.env.CONFORMANCE_DIR ?? join(homedir(), '.cache', 'podvisor-conformance');
  if (!o.reportOnly) {
    const tool = resolve(process.env.KUBE_E2E ?? join(root, '..', 'shared', 'tools', 'kube-e2e'));
    if (!existsSync(join(tool, 'build'))) {
      console.error(`conformance: the kube-e2e tool is not at ${tool} (set KUBE_E2E): the upstream e2e tests cannot run here`);
      process.exit(o.ifAvailable ? 0 : 1);
    }
    if ((await run(join(tool, 'build'), [])) !== 0) throw new Error('the kube-e2e build failed');
    for (const rt of o.runtimes) {
      // A fresh cluster per runtime; the results and events of earlier runs (other sets) are kept.
      const dir = join(baseDir, rt);
      if (existsSync(dir)) for (const n of readdirSync(dir)) if (n !== 'results' && n !== 'events.txt') rmSync(join(dir, n), { recursive: true, force: true });
      await runRuntime(tool, rt, o.sets, baseDir, o.group, o.focus);
    }
  }
  const runtimes = o.runtimes.filter((rt) => existsSync(join(baseDir, rt)));
  writeFileSync(o.out, `${report(baseDir, runtimes)}\n`);
  console.error(`conformance: wrote ${o.out}`);
  const failed = runtimes.flatMap((rt) => [...collect(join(baseDir, rt), rt).tests].filter(([, r]) => r.state === 'fail').map(([n]) => `${rt}: ${n}`));
  for (const f of failed) console.error(`conformance: FAIL ${f}`);
  if (o.failOnFailure && failed.length > 0) process.exit(1);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`conformance: ${err.message}`);
    process.exit(1);
  });
}
