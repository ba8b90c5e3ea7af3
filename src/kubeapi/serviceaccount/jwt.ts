// Compact JWS tokens signed with the agent's service-account key: ES256 (ECDSA P-256 with SHA-256,
// the signature as r‖s) or RS256, by node:crypto alone. The key ID is the one the API server gives a
// public key (keyIDFromPublicKey: the unpadded base64url SHA-256 of its PKIX DER), so a verifier that
// reads the issuer's keys finds it.
// Upstream: pkg/serviceaccount/jwt.go (JWTTokenGenerator, the signer of go-jose).

import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

export type JwtAlgorithm = 'ES256' | 'RS256';

export interface JwtHeader {
  alg: string;
  kid?: string;
  typ?: string;
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

function algorithmOf(key: KeyObject): JwtAlgorithm {
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  throw new Error(`the service-account key must be an ECDSA P-256 or an RSA key, not ${key.asymmetricKeyType ?? 'unknown'}`);
}

/** keyIDFromPublicKey: unpadded base64url of the SHA-256 of the public key's PKIX (SubjectPublicKeyInfo) DER. */
export function keyID(publicKey: KeyObject): string {
  return b64url(
    createHash('sha256')
      .update(publicKey.export({ type: 'spki', format: 'der' }))
      .digest(),
  );
}

/** Signs and verifies tokens with one key pair. */
export class JwtSigner {
  readonly algorithm: JwtAlgorithm;
  readonly keyId: string;
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;

  /** From the PEM of the private key (the public key is derived from it). */
  constructor(privateKeyPem: string | Buffer) {
    this.privateKey = createPrivateKey(privateKeyPem);
    this.publicKey = createPublicKey(this.privateKey);
    this.algorithm = algorithmOf(this.privateKey);
    this.keyId = keyID(this.publicKey);
  }

  /** The compact serialization of the claims, signed. */
  sign(claims: object): string {
    const header: JwtHeader = { alg: this.algorithm, kid: this.keyId };
    const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
    const signature =
      this.algorithm === 'ES256'
        ? sign('sha256', Buffer.from(input), { key: this.privateKey, dsaEncoding: 'ieee-p1363' })
        : sign('sha256', Buffer.from(input), this.privateKey);
    return `${input}.${b64url(signature)}`;
  }

  /**
   * The claims of a token this key signed, or undefined for anything else: not three parts, another
   * algorithm (none included) or key ID, a bad signature, claims that are not a JSON object.
   */
  verify(token: string): Record<string, unknown> | undefined {
    const parts = token.split('.');
    if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]*$/.test(p))) return undefined;
    const [h, c, s] = parts as [string, string, string];
    let header: JwtHeader;
    try {
      header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as JwtHeader;
    } catch {
      return undefined;
    }
    if (typeof header !== 'object' || header === null || header.alg !== this.algorithm) return undefined;
    if (header.kid !== undefined && header.kid !== this.keyId) return undefined;
    const input = Buffer.from(`${h}.${c}`);
    const signature = Buffer.from(s, 'base64url');
    const ok =
      this.algorithm === 'ES256'
        ? signature.length === 64 && verify('sha256', input, { key: this.publicKey, dsaEncoding: 'ieee-p1363' }, signature)
        : verify('sha256', input, this.publicKey, signature);
    if (!ok) return undefined;
    try {
      const claims = JSON.parse(Buffer.from(c, 'base64url').toString('utf8')) as unknown;
      return typeof claims === 'object' && claims !== null && !Array.isArray(claims) ? (claims as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  }
}

/** Whether a bearer token looks like a JWT (three base64url parts), before any key is tried. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}
