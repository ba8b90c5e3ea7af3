// The probe-load floor: the same HTTP GETs and TCP connects per second as the agent's probes, with
// node:http and node:net, a fresh connection each time and nothing else, to show the raw cost.

import http from 'node:http';
import net from 'node:net';
import { serve } from '../lib/child-server.js';
import { runSlots, type Slots } from '../lib/slots.js';
import { MeasureWindow } from '../lib/window.js';

export interface ProbeFloorParams {
  httpPort: number;
  tcpPort: number;
  /** One HTTP path and one TCP connect per entry per period. */
  paths: string[];
  periodMs: number;
  timeoutMs: number;
}

const BODY_LIMIT = 10 * 1024;
// The program's state lives in main(), one instance per process.
async function main(): Promise<void> {
  const window = new MeasureWindow();
  let slots: Slots | undefined;

  function httpGet(p: ProbeFloorParams, path: string): void {
    const req = http.get(
      {
        host: '127.0.0.1',
        port: p.httpPort,
        path,
        agent: false,
        timeout: p.timeoutMs,
        headers: { 'User-Agent': 'kube-probe/1.33', Accept: '*/*', Connection: 'close' },
      },
      (res) => {
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > BODY_LIMIT) res.destroy();
        });
        res.on('end', () => window.count(res.statusCode! >= 200 && res.statusCode! < 400 ? 'ok' : 'failed'));
        res.on('error', () => window.count('errors'));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => window.count('errors'));
  }

  function tcpConnect(p: ProbeFloorParams): void {
    const s = net.connect({ host: '127.0.0.1', port: p.tcpPort, timeout: p.timeoutMs });
    s.on('connect', () => {
      window.count('ok');
      s.destroy();
    });
    s.on('timeout', () => s.destroy(new Error('timeout')));
    s.on('error', () => window.count('errors'));
  }

  serve(
    {
      start: (p: ProbeFloorParams) => {
        window.begin();
        const n = p.paths.length;
        // Slots 0..n-1 are the HTTP GETs, n..2n-1 the TCP connects, interleaved over the period.
        slots = runSlots(
          2 * n,
          p.periodMs,
          (slot) => (slot % 2 === 0 ? httpGet(p, p.paths[slot / 2]!) : tcpConnect(p)),
          (ms) => window.late(ms),
        );
        return null;
      },
      begin: () => window.begin(),
      read: () => window.read(),
      stop: () => {
        slots?.stop();
        return window.read();
      },
    },
    async () => slots?.stop(),
  );
}

await main();
