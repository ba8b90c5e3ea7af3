// The probe history route is guarded as /containerLogs is: on the agent's TCP port the token is
// required, the read-only port refuses it, and the kubelet port authorises it as nodes/proxy.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { authorize } from '../../src/server/access.js';
import { kubeletRequestAttributes } from '../../src/server/kubelet-auth.js';
import { probeHistoryPath } from '../../src/server/probe-routes.js';

const req = (url: string, headers: Record<string, string> = {}) => ({ method: 'GET', url, headers, socket: new Socket() }) as unknown as IncomingMessage;
const probes = probeHistoryPath('default', 'web');
const logs = '/containerLogs/default/web/app';
const code = (r: ReturnType<typeof authorize>) => ('code' in r ? r.code : 200);

describe('access to the probe history', () => {
  it('needs what /containerLogs needs on every listener', () => {
    const tcp = { kind: 'tcp', token: 'secret', anonymous: false } as const;
    for (const path of [probes, logs]) {
      assert.equal(code(authorize(req(path), tcp)), 401, path);
      assert.equal(code(authorize(req(path, { authorization: 'Bearer wrong' }), tcp)), 401, path);
      assert.equal(code(authorize(req(path, { authorization: 'Bearer secret' }), tcp)), 200, path);
      assert.equal(code(authorize(req(path), { kind: 'read-only' })), 403, path);
      assert.equal(code(authorize(req(path), { kind: 'unix' })), 200, path);
    }
    const attrs = kubeletRequestAttributes('GET', probes, 'n1');
    assert.equal(`${attrs.verb} ${attrs.resource}/${attrs.subresource}`, 'get nodes/proxy');
    assert.equal(probes, '/podvisor/v1/namespaces/default/pods/web/probes');
  });
});
