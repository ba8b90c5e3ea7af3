// The Kubernetes API layer alone in its process: the project's handler (src/kubeapi/handler.ts) over
// an in-memory pod store (the one the API tests use), on a bare node:http server, so the bench
// measures what listing as a Table and watching cost, without a runtime or pod workers. The store
// hands pods out as the agent's registry does (a fresh pod and metadata over a shared spec and
// status), not deep-copied as the tests have it, so its copying does not stand in for the API's cost.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pod } from '../../src/api/types.js';
import { createKubeApiHandler } from '../../src/kubeapi/handler.js';
import { MemoryBackend } from '../../test/kubeapi/memory-backend.js';
import { serve } from '../lib/child-server.js';
import { benchPod, podName } from '../lib/manifests.js';
import { MeasureWindow } from '../lib/window.js';

export interface KubeApiHostParams {
  count: number;
}

export interface KubeApiHostStart {
  port: number;
}

async function main(): Promise<void> {
  const window = new MeasureWindow();
  const backend = new MemoryBackend({ copies: 'view' });
  const handler = createKubeApiHandler(backend);
  const server = createServer((req, res) => {
    window.count('requests');
    void handler(req, res).then((handled) => {
      if (!handled) {
        res.writeHead(404);
        res.end();
      }
    });
  });
  let names: string[] = [];
  let generation = 0;

  async function start(p: KubeApiHostParams): Promise<KubeApiHostStart> {
    for (let i = 0; i < p.count; i++) {
      const name = podName('api', i);
      names.push(name);
      await backend.createPod(benchPod(name, { terminationGracePeriodSeconds: 2 }) as Pod);
    }
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { port: (server.address() as AddressInfo).port };
  }

  /**
   * count status changes (a restart count going up), cycling through the pods: one MODIFIED each.
   * Each is a new status object over the old one's unchanged parts, as a status manager makes it
   * (the store shares statuses with what it handed out, so one is never edited in place).
   */
  function modify({ count }: { count: number }): null {
    generation++;
    for (let i = 0; i < count; i++) {
      const name = names[i % names.length]!;
      const old = backend.pods.get(`default/${name}`)!.status!;
      const status = { ...old, containerStatuses: (old.containerStatuses ?? []).map((c) => ({ ...c, restartCount: generation })) };
      backend.setStatus('default', name, status);
    }
    return null;
  }

  const close = async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
  serve(
    {
      start,
      modify,
      begin: () => window.begin(),
      read: () => window.read(),
      stop: async () => {
        const r = window.read();
        await close();
        names = [];
        return r;
      },
    },
    close,
  );
}

await main();
