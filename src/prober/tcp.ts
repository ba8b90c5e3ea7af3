// The tcpSocket probe (§5.5): connect within the timeout, then close the connection as the kubelet's
// probe dialer does (SO_LINGER 1 s, pkg/probe/dialer_others.go): a FIN, not a reset, so a server that
// writes on accept sees an orderly end-of-stream; whatever is still open a second later is dropped.

import net from 'node:net';
import type { Clock } from '../util/clock.js';
import { dialErrorText, dialHost, joinHostPort, type ActionOutcome } from './probe.js';

/** How long a closing probe connection may wait for the peer's FIN (the kubelet's SO_LINGER). */
export const PROBE_LINGER_MS = 1000;

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
      closeGracefully(socket, clock);
      finish({ result: 'success', output: '' });
    });
    socket.on('error', (err) => finish({ result: 'failure', output: dialErrorText(err, addr) }));
  });
}

/**
 * Ends a connected socket with a FIN and reads (and drops) whatever the peer still sends, so the
 * kernel never answers unread data with a reset; once the peer has closed too, or after
 * PROBE_LINGER_MS, the socket is released. Errors after this point are nobody's concern.
 */
export function closeGracefully(socket: net.Socket, clock: Clock): void {
  socket.on('error', () => {});
  socket.resume();
  if (socket.destroyed) return;
  const linger = clock.setTimer(PROBE_LINGER_MS, () => socket.destroy());
  socket.once('close', () => linger.cancel());
  // The peer's FIN ends the read side; ours ends the write side.
  socket.once('end', () => socket.destroy());
  socket.end();
}
