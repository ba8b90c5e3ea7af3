// The tcpSocket probe (§5.5): connect within the timeout, then tear the connection down. The
// teardown is an RST (socket.resetAndDestroy), the effect the kubelet gets from SO_LINGER, so that
// thousands of probes leave no TIME_WAIT sockets behind on either end.

import net from 'node:net';
import type { Clock } from '../util/clock.js';
import { dialErrorText, dialHost, joinHostPort, type ActionOutcome } from './probe.js';

export function doTCPProbe(host: string, port: number, timeoutSeconds: number, clock: Clock): Promise<ActionOutcome> {
  const addr = joinHostPort(host, port);
  return new Promise((resolve) => {
    let settled = false;
    const socket = net.connect({ host: dialHost(host), port });
    const finish = (outcome: ActionOutcome) => {
      if (settled) return;
      settled = true;
      timer.cancel();
      resolve(outcome);
    };
    const timer = clock.setTimer(timeoutSeconds * 1000, () => {
      socket.destroy();
      finish({ result: 'failure', output: `dial tcp ${addr}: i/o timeout` });
    });
    socket.once('connect', () => {
      resetSocket(socket);
      finish({ result: 'success', output: '' });
    });
    socket.on('error', (err) => finish({ result: 'failure', output: dialErrorText(err, addr) }));
  });
}

/** Closes a connected socket with an RST so it does not linger in TIME_WAIT; falls back to destroy. */
export function resetSocket(socket: net.Socket): void {
  socket.on('error', () => {});
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}
