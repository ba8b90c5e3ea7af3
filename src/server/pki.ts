// The TCP listener's credentials, generated into the root dir on first start: a CA and a serving
// certificate signed by it, the key that signs service-account tokens (with `openssl`, as kubeadm-style tooling does: Node can make keys but not
// X.509 certificates), the bearer token (`<root>/token`), and a kubeconfig pointing at the endpoint.
// Private keys, the token and the kubeconfig are 0600.

import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
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

/** Names a serving certificate carries beside the host's own (the `kubernetes` Service's ClusterIP and DNS names). */
export interface ExtraNames {
  dns?: readonly string[];
  ips?: readonly string[];
}

/**
 * The CA and serving certificate under `<root>/pki/`, created when missing. The serving certificate
 * names localhost, 127.0.0.1, ::1, this host's name, the listen address and the extra names; it is
 * made again (by the same CA) when the names it should carry change (`server.sans` records them).
 */
export async function ensureServingCert(rootDir: string, address: string, nodeName: string, extra: ExtraNames = {}): Promise<ServingCert> {
  const dir = join(rootDir, 'pki');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const out: ServingCert = { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'server.crt'), keyFile: join(dir, 'server.key') };
  const caKey = join(dir, 'ca.key');
  const sansFile = join(dir, 'server.sans');
  const dns = new Set(['localhost', hostname().toLowerCase(), nodeName, ...(extra.dns ?? [])].filter((n) => /^[a-z0-9.-]+$/i.test(n)));
  const ips = new Set(['127.0.0.1', '::1', ...(extra.ips ?? []).filter((i) => isIP(i))]);
  if (isIP(address) && address !== '0.0.0.0' && address !== '::') ips.add(address);
  const san = [...[...dns].map((d) => `DNS:${d}`), ...[...ips].map((i) => `IP:${i}`)].join(',');
  const haveCA = (await exists(out.caFile)) && (await exists(caKey));
  const recorded = await readFile(sansFile, 'utf8').catch(() => undefined);
  if (haveCA && (await exists(out.certFile)) && (await exists(out.keyFile))) {
    // A root dir from before the names were recorded keeps its certificate unless names were added.
    if (recorded === san || (recorded === undefined && !extra.dns?.length && !extra.ips?.length)) return out;
  }
  const tmp = await mkdtemp(join(dir, '.gen-'));
  try {
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    if (!haveCA) {
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
    }
    const csr = join(tmp, 'server.csr');
    const key = join(tmp, 'server.key');
    const cert = join(tmp, 'server.crt');
    await openssl(['req', '-new', ...ec, '-keyout', key, '-out', csr, '-subj', `/CN=${nodeName.replace(/[^A-Za-z0-9.-]/g, '') || 'podvisor'}`]);
    const ext = join(tmp, 'ext.cnf');
    await writeFile(ext, `subjectAltName=${san}\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n`);
    await openssl(['x509', '-req', '-in', csr, '-CA', out.caFile, '-CAkey', caKey, '-CAcreateserial', '-out', cert, '-days', '825', '-extfile', ext]);
    await Promise.all([chmod(caKey, 0o600), chmod(key, 0o600), chmod(out.caFile, 0o644), chmod(cert, 0o644)]);
    // The key first, then the certificate: a reader never pairs a new certificate with an old key for long.
    await rename(key, out.keyFile);
    await rename(cert, out.certFile);
    await writeFileAtomic(sansFile, san, 0o644);
  } finally {
    await rm(tmp, { recursive: true, force: true });
    await rm(join(dir, 'ca.srl'), { force: true });
  }
  return out;
}

/**
 * The key that signs service-account tokens, `<root>/pki/sa.key` (PKCS#8 PEM, ECDSA P-256, 0600):
 * made once, on first start, and kept, so tokens issued before a restart stay valid after it.
 */
export async function ensureServiceAccountKey(rootDir: string): Promise<string> {
  const dir = join(rootDir, 'pki');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, 'sa.key');
  try {
    const pem = await readFile(path, 'utf8');
    await chmod(path, 0o600);
    return pem;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  await writeFileAtomic(path, pem, 0o600);
  return pem;
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
