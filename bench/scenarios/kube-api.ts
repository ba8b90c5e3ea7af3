// The Kubernetes API's cost per request: a list of N pods as a Table (as kubectl asks for it) and a
// watch delivering N MODIFIED events, latency and CPU of the API process, against a bare node:http
// server answering JSON.stringify of the same pods in the same run. The API runs alone in its
// process (bench/procs/kubeapi-host.ts) over an in-memory pod store, so the figures are the API
// layer's, not the agent's pod work.

import { request, Agent } from 'node:http';
import type { Pod } from '../../src/api/types.js';
import { ChildHandle } from '../lib/child-handle.js';
import { distribution, preciseNow } from '../lib/stats.js';
import type { WindowReport } from '../lib/window.js';
import { figure, type ScenarioResult } from '../report/figures.js';
import type { JsonFloorParams, JsonFloorStart } from '../procs/json-floor.js';
import type { KubeApiHostParams, KubeApiHostStart } from '../procs/kubeapi-host.js';
import type { Scenario } from './types.js';

/** What kubectl 1.20 sends for `get pods`. */
const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const LISTS = 20;
const WATCH_ROUNDS = 5;
const twoX = { text: '≤ 2× floor', on: 'ratio' as const, op: '<=' as const, value: 2 };

function get(port: number, path: string, accept = 'application/json'): Promise<{ ms: number; bytes: number; body: string }> {
  return new Promise((resolve, reject) => {
    const t0 = preciseNow();
    const req = request({ host: '127.0.0.1', port, path, agent: false, headers: { Accept: accept } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const b = Buffer.concat(chunks);
        resolve({ ms: preciseNow() - t0, bytes: b.length, body: b.toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** An open watch: counts lines of type MODIFIED and resolves waiters once count reaches a target. */
function openWatch(port: number, path: string): Promise<{ until(n: number): Promise<number>; close(): void }> {
  return new Promise((resolve, reject) => {
    let seen = 0;
    let buf = '';
    const waiters: Array<{ n: number; done: (t: number) => void }> = [];
    const agent = new Agent({ keepAlive: false });
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.startsWith('{"type":"MODIFIED"')) seen++;
        }
        const now = preciseNow();
        for (let i = waiters.length - 1; i >= 0; i--) {
          if (seen >= waiters[i]!.n) {
            waiters[i]!.done(now);
            waiters.splice(i, 1);
          }
        }
      });
      resolve({
        until: (n) => (seen >= n ? Promise.resolve(preciseNow()) : new Promise((done) => waiters.push({ n, done }))),
        close: () => {
          req.destroy();
          agent.destroy();
        },
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const cpuMsPer = (w: WindowReport, count: number) => (1000 * w.cpuS) / count;

export const kubeApi: Scenario = {
  name: 'kube-api',
  defaultSizes: [1000],
  sizeIsPods: false,
  async run(n, ctx): Promise<ScenarioResult> {
    const api = await ChildHandle.start('kubeapi-host');
    ctx.defer(() => api.kill());
    const { port } = await api.call<KubeApiHostStart>('start', { count: n } satisfies KubeApiHostParams);
    const json = await get(port, '/api/v1/pods');
    const list = JSON.parse(json.body) as { items: Pod[]; metadata: { resourceVersion: string } };
    if (list.items.length !== n) throw new Error(`the API listed ${list.items.length} pods, not ${n}`);
    const floor = await ChildHandle.start('json-floor');
    ctx.defer(() => floor.kill());
    const floorPort = (await floor.call<JsonFloorStart>('start', { list } satisfies JsonFloorParams)).port!;

    // List as a Table, alternating with the floor's JSON.stringify of the same PodList.
    ctx.log(`kube-api N=${n}: ${LISTS} Table lists and ${LISTS} floor lists`);
    const tableProbe = await get(port, '/api/v1/pods', TABLE_ACCEPT);
    if (!tableProbe.body.includes('"kind":"Table"')) throw new Error(`no Table in the reply: ${tableProbe.body.slice(0, 200)}`);
    await get(floorPort, '/list');
    const tMs: number[] = [];
    const fMs: number[] = [];
    const tWin: WindowReport[] = [];
    const fWin: WindowReport[] = [];
    for (let i = 0; i < LISTS; i++) {
      await api.call('begin');
      tMs.push((await get(port, '/api/v1/pods', TABLE_ACCEPT)).ms);
      tWin.push(await api.call<WindowReport>('read'));
      await floor.call('begin');
      fMs.push((await get(floorPort, '/list')).ms);
      fWin.push(await floor.call<WindowReport>('read'));
    }
    // The same list as plain JSON (a PodList, no Table), alternating with the floor again.
    ctx.log(`kube-api N=${n}: ${LISTS} JSON lists and ${LISTS} floor lists`);
    const jMs: number[] = [];
    const jfMs: number[] = [];
    const jWin: WindowReport[] = [];
    const jfWin: WindowReport[] = [];
    for (let i = 0; i < LISTS; i++) {
      await api.call('begin');
      jMs.push((await get(port, '/api/v1/pods')).ms);
      jWin.push(await api.call<WindowReport>('read'));
      await floor.call('begin');
      jfMs.push((await get(floorPort, '/list')).ms);
      jfWin.push(await floor.call<WindowReport>('read'));
    }
    const sumCpu = (ws: WindowReport[]) => ws.reduce((s, w) => s + w.cpuS, 0);
    const t = distribution(tMs);
    const f = distribution(fMs);
    const j = distribution(jMs);
    const jf = distribution(jfMs);

    // A watch each; N MODIFIED events pushed through, timed from the call that makes them to the last
    // one read by the client.
    ctx.log(`kube-api N=${n}: ${WATCH_ROUNDS} rounds of ${n} MODIFIED events`);
    const aw = await openWatch(port, `/api/v1/pods?watch=1&resourceVersion=${list.metadata.resourceVersion}`);
    const fw = await openWatch(floorPort, '/watch');
    ctx.defer(() => {
      aw.close();
      fw.close();
    });
    const wA: number[] = [];
    const wF: number[] = [];
    let cpuA = 0;
    let cpuF = 0;
    for (let r = 1; r <= WATCH_ROUNDS; r++) {
      await api.call('begin');
      let t0 = preciseNow();
      await api.call('modify', { count: n });
      wA.push((await aw.until(r * n)) - t0);
      cpuA += (await api.call<WindowReport>('read')).cpuS;
      await floor.call('begin');
      t0 = preciseNow();
      await floor.call('emit', { count: n });
      wF.push((await fw.until(r * n)) - t0);
      cpuF += (await floor.call<WindowReport>('read')).cpuS;
    }
    aw.close();
    fw.close();
    await floor.stop();
    await api.stop();
    const wa = distribution(wA);
    const wf = distribution(wF);
    return {
      scenario: 'kube-api',
      size: n,
      figures: [
        figure(
          'table_p50_ms',
          `list ${n} pods as a Table p50 (${(tableProbe.bytes / 1024).toFixed(0)} KiB; floor JSON ${(json.bytes / 1024).toFixed(0)} KiB)`,
          'ms',
          t.p50,
          f.p50,
          twoX,
        ),
        figure('table_max_ms', `list as a Table, max of ${LISTS}`, 'ms', t.max, f.max),
        figure('table_cpu_ms', 'API CPU per Table list', 'ms', (1000 * sumCpu(tWin)) / LISTS, (1000 * sumCpu(fWin)) / LISTS, twoX),
        figure('json_p50_ms', `list ${n} pods as JSON (a PodList, no Table) p50`, 'ms', j.p50, jf.p50, twoX),
        figure('json_cpu_ms', 'API CPU per JSON list', 'ms', (1000 * sumCpu(jWin)) / LISTS, (1000 * sumCpu(jfWin)) / LISTS, twoX),
        figure('watch_p50_ms', `watch: ${n} MODIFIED events delivered, p50 of ${WATCH_ROUNDS}`, 'ms', wa.p50, wf.p50, twoX),
        figure('watch_max_ms', `watch: ${n} events, max of ${WATCH_ROUNDS}`, 'ms', wa.max, wf.max),
        figure(
          'watch_cpu_ms_per_event',
          'API CPU per MODIFIED event',
          'ms',
          cpuMsPer({ cpuS: cpuA } as WindowReport, WATCH_ROUNDS * n),
          cpuMsPer({ cpuS: cpuF } as WindowReport, WATCH_ROUNDS * n),
          twoX,
        ),
      ],
      notes: [
        "API: src/kubeapi/handler.ts over the in-memory pod store of the API tests (test/kubeapi/memory-backend.ts) handing pods out as the agent's registry does (fresh pod and metadata, spec and status shared; no deep copy), alone in its process, plain HTTP on 127.0.0.1 (no TLS, no token)",
        `Table: kubectl's Accept header; floor: a bare node:http server answering JSON.stringify of the same v1 PodList (fresh connection per request, alternating)`,
        'JSON: the same list with Accept: application/json (a v1 PodList), alternating with the floor in the same way',
        'watch: from the call that changes N pod statuses (the store emits N MODIFIED) to the last event read by the client; floor: the same number of JSON.stringify({type, object}) lines written to an open chunked response',
        'CPU: process.cpuUsage() of each server process over each request or round (the IPC call that triggers a round is included on both sides)',
      ],
      raw: { tMs, fMs, jMs, jfMs, wA, wF, cpuA, cpuF, tableBytes: tableProbe.bytes, jsonBytes: json.bytes },
    };
  },
};
