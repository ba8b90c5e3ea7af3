// Client-certificate authentication on the kubelet port, as the kubelet's x509 authenticator: a
// certificate the TLS layer verified against --client-ca-file names the user (CN) and groups (O).

import type { IncomingMessage } from 'node:http';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import type { UserInfo } from '../http/router.js';

export type { UserInfo };

const list = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** The user of a verified client certificate, or undefined (none offered, or not signed by the CA). */
export function x509User(req: IncomingMessage): UserInfo | undefined {
  const sock = req.socket as TLSSocket;
  if (!sock.encrypted || !sock.authorized || typeof sock.getPeerCertificate !== 'function') return undefined;
  const cert: PeerCertificate = sock.getPeerCertificate();
  const subject = cert?.subject as unknown as Record<string, string | string[] | undefined> | undefined;
  if (!subject) return undefined;
  const cn = list(subject.CN)[0];
  if (!cn) return undefined;
  return { username: cn, groups: list(subject.O) };
}
