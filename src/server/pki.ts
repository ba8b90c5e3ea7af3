// The TCP listener's credentials, generated into the root dir on first start: a CA and a serving
// certificate signed by it (with `openssl`, as kubeadm-style tooling does: Node can make keys but not
// X.509 certificates), the bearer token (`<root>/token`), and a kubeconfig pointing at the endpoint.
// Private keys, the token and the kubeconfig are 0600.

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isIP } from 'node:net';
import { writeFileAtomic } from '../util/atomic-write.js';

const run = promisify(execFile);

export interface ServingCert {
  caFile: string;
  certFile: string;
  keyFile: string;
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args, { timeout: 60_000 });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT')
      throw new Error('generating the TLS certificate needs the openssl command; install it or pass --tls-cert-file and --tls-private-key-file');
    throw new Error(`openssl ${args[0]} failed: ${String(e.stderr ?? e.message).trim()}`);
  }
}

/**
 * The CA and serving certificate under `<root>/pki/`, created when missing. The serving certificate
 * names localhost, 127.0.0.1, ::1, this host's name and the listen address.
 */
export async function ensureServingCert(rootDir: string, address: string, nodeName: string): Promise<ServingCert> {
  const dir = join(rootDir, 'pki');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const out: ServingCert = { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'server.crt'), keyFile: join(dir, 'server.key') };
  if ((await exists(out.caFile)) && (await exists(out.certFile)) && (await exists(out.keyFile))) return out;
  const caKey = join(dir, 'ca.key');
  const tmp = await mkdtemp(join(dir, '.gen-'));
  try {
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    await openssl([
      'req',
      '-x509',
      ...ec,
      '-keyout',
      caKey,
      '-out',
      out.caFile,
      '-days',
      '3650',
      '-subj',
      '/CN=podvisor-ca',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    const csr = join(tmp, 'server.csr');
    await openssl(['req', '-new', ...ec, '-keyout', out.keyFile, '-out', csr, '-subj', `/CN=${nodeName.replace(/[^A-Za-z0-9.-]/g, '') || 'podvisor'}`]);
    const dns = new Set(['localhost', hostname().toLowerCase(), nodeName].filter((n) => /^[a-z0-9.-]+$/i.test(n)));
    const ips = new Set(['127.0.0.1', '::1']);
    if (isIP(address) && address !== '0.0.0.0' && address !== '::') ips.add(address);
    const san = [...[...dns].map((d) => `DNS:${d}`), ...[...ips].map((i) => `IP:${i}`)].join(',');
    const ext = join(tmp, 'ext.cnf');
    await writeFile(ext, `subjectAltName=${san}\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n`);
    await openssl(['x509', '-req', '-in', csr, '-CA', out.caFile, '-CAkey', caKey, '-CAcreateserial', '-out', out.certFile, '-days', '825', '-extfile', ext]);
    await Promise.all([chmod(caKey, 0o600), chmod(out.keyFile, 0o600), chmod(out.caFile, 0o644), chmod(out.certFile, 0o644)]);
  } finally {
    await rm(tmp, { recursive: true, force: true });
    await rm(join(dir, 'ca.srl'), { force: true });
  }
  return out;
}

/** The bearer token in `<root>/token` (0600), created (32 random bytes, hex) when missing. */
export async function ensureToken(rootDir: string): Promise<string> {
  const path = join(rootDir, 'token');
  try {
    const t = (await readFile(path, 'utf8')).trim();
    if (t.length >= 16) {
      await chmod(path, 0o600);
      return t;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const token = randomBytes(32).toString('hex');
  await writeFileAtomic(path, `${token}\n`, 0o600);
  return token;
}

/** Writes `<root>/kubeconfig` (0600) for kubectl: the TCP endpoint, its CA and the token. */
export async function writeKubeconfig(rootDir: string, server: string, caFile: string, token: string): Promise<string> {
  const path = join(rootDir, 'kubeconfig');
  const ca = (await readFile(caFile)).toString('base64');
  const text = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: podvisor',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${ca}`,
    'users:',
    '- name: podvisor',
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: podvisor',
    '  context:',
    '    cluster: podvisor',
    '    user: podvisor',
    '    namespace: default',
    'current-context: podvisor',
    '',
  ].join('\n');
  await writeFileAtomic(path, text, 0o600);
  return path;
}
