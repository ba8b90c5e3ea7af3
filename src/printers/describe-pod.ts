// `kubectl describe pod` for a pod and its events, in kubectl's layout (describePod): the header
// fields, Init Containers and Containers with their state, last state, readiness, restarts, probes,
// environment and mounts, Conditions, Volumes, QoS Class, Node-Selectors, Tolerations and Events;
// beside each probe, its last result from the agent's probe history (`Last readiness: Success 3s ago (streak 5)`).

import type { Container, ContainerState, ContainerStatus, EnvVar, Event, Pod, Probe } from '../api/types.js';
import { humanDuration } from './ages.js';
import { formatDescribeEvents } from './events.js';
import { goList } from '../util/go-format.js';
import { lastResultText, type ProbeHistoryItem } from './probe-timeline.js';
import { describeSettings, tabwriteText } from './tabwriter.js';

const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad2 = (n: number) => String(n).padStart(2, '0');

/** Go's time.RFC1123Z in the local time zone: `Mon, 02 Jan 2006 15:04:05 -0700`. */
export function rfc1123z(time: string | undefined): string {
  const ms = Date.parse(time ?? '');
  // Go formats the zero time for an unset one.
  if (Number.isNaN(ms)) return 'Mon, 01 Jan 0001 00:00:00 +0000';
  const d = new Date(ms);
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  const zone = `${sign}${pad2(Math.floor(Math.abs(off) / 60))}${pad2(Math.abs(off) % 60)}`;
  return `${days[d.getDay()]}, ${pad2(d.getDate())} ${months[d.getMonth()]} ${d.getFullYear()} ${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())} ${zone}`;
}

/** kubectl's PrefixWriter: each write indented by two spaces per level. */
class PrefixWriter {
  text = '';
  write(level: number, s: string): void {
    this.text += '  '.repeat(level) + s;
  }
}

const bool = (b: boolean | undefined) => (b ? 'True' : 'False');
const orNone = (s: string | undefined) => (s ? s : '<none>');
const sortedKeys = (m: Record<string, string> | undefined) => Object.keys(m ?? {}).sort();

function labelsMultiline(w: PrefixWriter, title: string, labels: Record<string, string> | undefined): void {
  w.write(0, `${title}:\t`);
  const keys = sortedKeys(labels);
  if (keys.length === 0) return w.write(0, '<none>\n');
  keys.forEach((k, i) => {
    if (i !== 0) w.write(0, '\t');
    w.write(0, `${k}=${labels![k]}\n`);
  });
}

const maxAnnotationLen = 140;
function annotationsMultiline(w: PrefixWriter, title: string, annotations: Record<string, string> | undefined): void {
  w.write(0, `${title}:\t`);
  const keys = sortedKeys(annotations);
  if (keys.length === 0) return w.write(0, '<none>\n');
  keys.forEach((k, i) => {
    if (i !== 0) w.write(0, '\t');
    const value = annotations![k]!.replace(/\n$/, '');
    if (value.length + k.length + 2 > maxAnnotationLen || value.includes('\n')) {
      w.write(0, `${k}:\n`);
      for (const s of value.split('\n')) w.write(0, `\t  ${s.length > maxAnnotationLen - 2 ? `${s.slice(0, maxAnnotationLen - 2)}...` : s}\n`);
    } else {
      w.write(0, `${k}: ${value}\n`);
    }
  });
}

/** DescribeProbe: `http-get http://:8080/healthz delay=0s timeout=1s period=10s #success=1 #failure=3`. */
export function describeProbe(p: Probe): string {
  const attrs = `delay=${p.initialDelaySeconds ?? 0}s timeout=${p.timeoutSeconds ?? 0}s period=${p.periodSeconds ?? 0}s #success=${p.successThreshold ?? 0} #failure=${p.failureThreshold ?? 0}`;
  if (p.exec) return `exec ${goList(p.exec.command ?? [])} ${attrs}`;
  if (p.httpGet) {
    const port = String(p.httpGet.port ?? '');
    const host = p.httpGet.host ?? '';
    const hostPort = port ? (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`) : host;
    return `http-get ${(p.httpGet.scheme ?? 'HTTP').toLowerCase()}://${hostPort}${p.httpGet.path ?? ''} ${attrs}`;
  }
  if (p.tcpSocket) return `tcp-socket ${p.tcpSocket.host ?? ''}:${String(p.tcpSocket.port)} ${attrs}`;
  if (p.grpc) return `grpc <pod>:${p.grpc.port} ${p.grpc.service ?? ''} ${attrs}`;
  return `unknown ${attrs}`;
}

function describeState(w: PrefixWriter, name: string, state: ContainerState | undefined): void {
  if (state?.running) {
    w.write(2, `${name}:\tRunning\n`);
    w.write(3, `Started:\t${rfc1123z(state.running.startedAt)}\n`);
  } else if (state?.waiting) {
    w.write(2, `${name}:\tWaiting\n`);
    if (state.waiting.reason) w.write(3, `Reason:\t${state.waiting.reason}\n`);
  } else if (state?.terminated) {
    const t = state.terminated;
    w.write(2, `${name}:\tTerminated\n`);
    if (t.reason) w.write(3, `Reason:\t${t.reason}\n`);
    if (t.message) w.write(3, `Message:\t${t.message}\n`);
    w.write(3, `Exit Code:\t${t.exitCode}\n`);
    if ((t.signal ?? 0) > 0) w.write(3, `Signal:\t${t.signal}\n`);
    w.write(3, `Started:\t${rfc1123z(t.startedAt)}\n`);
    w.write(3, `Finished:\t${rfc1123z(t.finishedAt)}\n`);
  } else {
    w.write(2, `${name}:\tWaiting\n`);
  }
}

/** EnvValueRetriever: a fieldRef kubectl can resolve from the pod's metadata, else empty. */
function fieldRefValue(pod: Pod, path: string): string {
  const m = pod.metadata ?? {};
  if (path === 'metadata.name') return m.name ?? '';
  if (path === 'metadata.namespace') return m.namespace ?? '';
  if (path === 'metadata.uid') return m.uid ?? '';
  const sub = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(path);
  if (sub) return (sub[1] === 'labels' ? m.labels : m.annotations)?.[sub[2]!] ?? '';
  return '';
}

function describeEnv(w: PrefixWriter, pod: Pod, c: Container): void {
  if ((c.envFrom ?? []).length > 0) {
    w.write(2, 'Environment Variables from:\n');
    for (const e of c.envFrom!) {
      const [from, ref] = e.configMapRef ? ['ConfigMap', e.configMapRef] : ['Secret', e.secretRef];
      const optional = ref?.optional === true;
      if (!e.prefix) w.write(3, `${ref?.name ?? ''}\t${from}\tOptional: ${optional}\n`);
      else w.write(3, `${ref?.name ?? ''}\t${from} with prefix '${e.prefix}'\tOptional: ${optional}\n`);
    }
  }
  const env: EnvVar[] = c.env ?? [];
  w.write(2, `Environment:${env.length === 0 ? '\t<none>' : ''}\n`);
  for (const e of env) {
    const from = e.valueFrom;
    if (!from) {
      (e.value ?? '').split('\n').forEach((s, i) => w.write(3, i === 0 ? `${e.name}:\t${s}\n` : `\t${s}\n`));
    } else if (from.fieldRef) {
      w.write(3, `${e.name}:\t${fieldRefValue(pod, from.fieldRef.fieldPath)} (${from.fieldRef.apiVersion ?? 'v1'}:${from.fieldRef.fieldPath})\n`);
    } else if (from.resourceFieldRef) {
      const r = from.resourceFieldRef.resource;
      const [kind, res] = r.split('.') as ['limits' | 'requests', string];
      let value = String(c.resources?.[kind]?.[res] ?? '0');
      if (value === '0' && (r === 'limits.cpu' || r === 'limits.memory')) value = 'node allocatable';
      w.write(3, `${e.name}:\t${value} (${r})\n`);
    } else if (from.secretKeyRef) {
      w.write(
        3,
        `${e.name}:\t<set to the key '${from.secretKeyRef.key}' in secret '${from.secretKeyRef.name ?? ''}'>\tOptional: ${from.secretKeyRef.optional === true}\n`,
      );
    } else if (from.configMapKeyRef) {
      w.write(
        3,
        `${e.name}:\t<set to the key '${from.configMapKeyRef.key}' of config map '${from.configMapKeyRef.name ?? ''}'>\tOptional: ${from.configMapKeyRef.optional === true}\n`,
      );
    }
  }
}

/** What describe adds beside the probe specs: the probe history and the time its ages are measured at. */
interface ProbeNotes {
  items: readonly ProbeHistoryItem[];
  now: number;
}

function describeProbeLine(w: PrefixWriter, label: 'Liveness' | 'Readiness' | 'Startup', probe: Probe, container: string, notes: ProbeNotes): void {
  w.write(2, `${label}:\t${describeProbe(probe)}\n`);
  const name = label.toLowerCase();
  const last = lastResultText(notes.items, container, name, notes.now);
  if (last) w.write(2, `Last ${name}:\t${last}\n`);
}

function describeContainers(
  w: PrefixWriter,
  pod: Pod,
  label: string,
  containers: Container[],
  statuses: ContainerStatus[] | undefined,
  notes: ProbeNotes,
): void {
  const byName = new Map((statuses ?? []).map((s) => [s.name, s]));
  w.write(0, containers.length === 0 ? `${label}: <none>\n` : `${label}:\n`);
  for (const c of containers) {
    const st = byName.get(c.name);
    w.write(1, `${c.name}:\n`);
    if (st) w.write(2, `Container ID:\t${st.containerID ?? ''}\n`);
    w.write(2, `Image:\t${c.image ?? ''}\n`);
    if (st) w.write(2, `Image ID:\t${st.imageID ?? ''}\n`);
    const ports = (c.ports ?? []).map((p) => `${p.containerPort}/${p.protocol ?? 'TCP'}`).join(', ');
    w.write(2, ports.includes(',') ? `Ports:\t${ports}\n` : `Port:\t${orNone(ports)}\n`);
    const hostPorts = (c.ports ?? []).map((p) => `${p.hostPort ?? 0}/${p.protocol ?? 'TCP'}`).join(', ');
    w.write(2, hostPorts.includes(',') ? `Host Ports:\t${hostPorts}\n` : `Host Port:\t${orNone(hostPorts)}\n`);
    if ((c.command ?? []).length > 0) {
      w.write(2, 'Command:\n');
      for (const x of c.command!) for (const s of x.split('\n')) w.write(3, `${s}\n`);
    }
    if ((c.args ?? []).length > 0) {
      w.write(2, 'Args:\n');
      for (const x of c.args!) for (const s of x.split('\n')) w.write(3, `${s}\n`);
    }
    if (st) {
      describeState(w, 'State', st.state);
      if (st.lastState?.terminated) describeState(w, 'Last State', st.lastState);
      w.write(2, `Ready:\t${bool(st.ready)}\n`);
      w.write(2, `Restart Count:\t${st.restartCount ?? 0}\n`);
    }
    for (const kind of ['limits', 'requests'] as const) {
      const list = c.resources?.[kind] ?? {};
      const names = Object.keys(list).sort();
      if (names.length === 0) continue;
      w.write(2, `${kind === 'limits' ? 'Limits' : 'Requests'}:\n`);
      for (const n of names) w.write(3, `${n}:\t${String(list[n])}\n`);
    }
    if (c.livenessProbe) describeProbeLine(w, 'Liveness', c.livenessProbe, c.name, notes);
    if (c.readinessProbe) describeProbeLine(w, 'Readiness', c.readinessProbe, c.name, notes);
    if (c.startupProbe) describeProbeLine(w, 'Startup', c.startupProbe, c.name, notes);
    describeEnv(w, pod, c);
    const mounts = [...(c.volumeMounts ?? [])].sort((a, b) => (a.mountPath < b.mountPath ? -1 : a.mountPath > b.mountPath ? 1 : 0));
    w.write(2, `Mounts:${mounts.length === 0 ? '\t<none>' : ''}\n`);
    for (const m of mounts) {
      const flags = [m.readOnly ? 'ro' : 'rw', ...(m.subPath ? [`path=${JSON.stringify(m.subPath)}`] : [])];
      w.write(3, `${m.mountPath} from ${m.name} (${flags.join(',')})\n`);
    }
  }
}

function describeVolumes(w: PrefixWriter, pod: Pod): void {
  const volumes = pod.spec?.volumes ?? [];
  if (volumes.length === 0) return w.write(0, 'Volumes:\t<none>\n');
  w.write(0, 'Volumes:\n');
  for (const v of volumes) {
    w.write(1, `${v.name}:\n`);
    if (v.hostPath) {
      w.write(2, `Type:\tHostPath (bare host directory volume)\n    Path:\t${v.hostPath.path}\n    HostPathType:\t${v.hostPath.type || '<none>'}\n`);
    } else if (v.emptyDir) {
      const size = v.emptyDir.sizeLimit && String(v.emptyDir.sizeLimit) !== '0' ? String(v.emptyDir.sizeLimit) : '<unset>';
      w.write(2, `Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t${v.emptyDir.medium ?? ''}\n    SizeLimit:\t${size}\n`);
    } else if (v.secret) {
      w.write(
        2,
        `Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t${v.secret.secretName ?? ''}\n    Optional:\t${v.secret.optional === true}\n`,
      );
    } else if (v.configMap) {
      w.write(
        2,
        `Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t${v.configMap.name ?? ''}\n    Optional:\t${v.configMap.optional === true}\n`,
      );
    } else if (v.downwardAPI) {
      w.write(2, 'Type:\tDownwardAPI (a volume populated by information about the pod)\n    Items:\n');
      for (const it of v.downwardAPI.items ?? []) {
        if (it.fieldRef) w.write(3, `${it.fieldRef.fieldPath} -> ${it.path}\n`);
        else if (it.resourceFieldRef) w.write(3, `${it.resourceFieldRef.resource} -> ${it.path}\n`);
      }
    } else if (v.projected) {
      w.write(2, 'Type:\tProjected (a volume that contains injected data from multiple sources)\n');
    } else {
      w.write(1, '<unknown>\n');
    }
  }
}

function tolerationsMultiline(w: PrefixWriter, pod: Pod): void {
  const tolerations = pod.spec?.tolerations ?? [];
  w.write(0, 'Tolerations:\t');
  if (tolerations.length === 0) return w.write(0, '<none>\n');
  tolerations.forEach((t, i) => {
    if (i !== 0) w.write(0, '\t');
    let s = t.key ?? '';
    if (t.value) s += `=${t.value}`;
    if (t.effect) s += `:${t.effect}`;
    if (t.operator === 'Exists' && !t.value) s += t.key || t.effect ? ' op=Exists' : 'op=Exists';
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null) s += ` for ${t.tolerationSeconds}s`;
    w.write(0, `${s}\n`);
  });
}

/**
 * The text of `kubectl describe pod` for pod and its events, ages measured against now; with the
 * pod's probe history, each probe's last result beside its spec.
 */
export function describePod(pod: Pod, events: readonly Event[], now: number, probes: readonly ProbeHistoryItem[] = []): string {
  const notes: ProbeNotes = { items: probes, now };
  const w = new PrefixWriter();
  const m = pod.metadata ?? {};
  const st = pod.status ?? {};
  w.write(0, `Name:\t${m.name ?? ''}\n`);
  w.write(0, `Namespace:\t${m.namespace ?? ''}\n`);
  if (pod.spec?.priority !== undefined && pod.spec?.priority !== null) w.write(0, `Priority:\t${pod.spec.priority}\n`);
  if (pod.spec?.priorityClassName) w.write(0, `Priority Class Name:\t${pod.spec.priorityClassName}\n`);
  w.write(0, pod.spec?.nodeName ? `Node:\t${pod.spec.nodeName}/${st.hostIP ?? ''}\n` : 'Node:\t<none>\n');
  if (st.startTime) w.write(0, `Start Time:\t${rfc1123z(st.startTime)}\n`);
  labelsMultiline(w, 'Labels', m.labels);
  annotationsMultiline(w, 'Annotations', m.annotations);
  if (m.deletionTimestamp) {
    w.write(0, `Status:\tTerminating (lasts ${humanDuration(Date.parse(m.deletionTimestamp) - now)})\n`);
    w.write(0, `Termination Grace Period:\t${m.deletionGracePeriodSeconds ?? 0}s\n`);
  } else {
    w.write(0, `Status:\t${st.phase ?? ''}\n`);
  }
  if (st.reason) w.write(0, `Reason:\t${st.reason}\n`);
  if (st.message) w.write(0, `Message:\t${st.message}\n`);
  w.write(0, `IP:\t${st.podIP ?? ''}\n`);
  if ((st.podIPs ?? []).length === 0) w.write(0, 'IPs:\t<none>\n');
  else {
    w.write(0, 'IPs:\n');
    for (const ip of st.podIPs!) w.write(1, `IP:\t${ip.ip}\n`);
  }
  const owner = (m.ownerReferences ?? []).find((o) => o.controller);
  if (owner) w.write(0, `Controlled By:\t${owner.kind}/${owner.name}\n`);
  if (st.nominatedNodeName) w.write(0, `NominatedNodeName:\t${st.nominatedNodeName}\n`);
  if ((pod.spec?.initContainers ?? []).length > 0) describeContainers(w, pod, 'Init Containers', pod.spec!.initContainers!, st.initContainerStatuses, notes);
  describeContainers(w, pod, 'Containers', pod.spec?.containers ?? [], st.containerStatuses, notes);
  const gates = pod.spec?.readinessGates ?? [];
  if (gates.length > 0) {
    w.write(0, 'Readiness Gates:\n  Type\tStatus\n');
    for (const g of gates) {
      const c = (st.conditions ?? []).find((x) => x.type === g.conditionType);
      w.write(1, `${g.conditionType} \t${c?.status ?? '<none>'} \n`);
    }
  }
  if ((st.conditions ?? []).length > 0) {
    w.write(0, 'Conditions:\n  Type\tStatus\n');
    for (const c of st.conditions!) w.write(1, `${c.type} \t${c.status} \n`);
  }
  describeVolumes(w, pod);
  w.write(0, `QoS Class:\t${st.qosClass ?? ''}\n`);
  labelsMultiline(w, 'Node-Selectors', pod.spec?.nodeSelector);
  tolerationsMultiline(w, pod);
  let text = w.text;
  if (events.length === 0) text += 'Events:\t<none>\n';
  const out = tabwriteText(text, describeSettings);
  // kubectl flushes before the events, which align among themselves.
  return events.length === 0 ? out : out + formatDescribeEvents(events, now);
}
