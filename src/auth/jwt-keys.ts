import { createHash, createPublicKey } from 'node:crypto';
import type { Env } from '../config/env.validation.js';

/** A public key in JWK form (RFC 7517) as published at /.well-known/jwks.json. */
export interface PublicJwk {
  kty: 'RSA';
  n: string;
  e: string;
  alg: 'RS256';
  use: 'sig';
  kid: string;
}

/**
 * The access-token keys (SPEC §3): HS256 with JWT_SECRET by default; RS256 with
 * JWT_PRIVATE_KEY/JWT_PUBLIC_KEY when set, with `kid` the RFC 7638 thumbprint of the public key.
 * The algorithm is pinned: verification accepts only `algorithm`.
 */
export class JwtKeys {
  readonly algorithm: 'HS256' | 'RS256';
  /** Key for signing: the secret, or the private key PEM. */
  readonly signingKey: string;
  /** Key for verifying: the secret, or the public key PEM. */
  readonly verifyKey: string;
  /** Key id for the JWT header (RS256 only). */
  readonly kid?: string;
  /** The published public key (RS256 only). */
  readonly jwk?: PublicJwk;

  constructor(env: Pick<Env, 'JWT_SECRET' | 'JWT_PRIVATE_KEY' | 'JWT_PUBLIC_KEY'>) {
    if (env.JWT_PRIVATE_KEY && env.JWT_PUBLIC_KEY) {
      const jwk = createPublicKey(env.JWT_PUBLIC_KEY).export({ format: 'jwk' }) as { n: string; e: string };
      const kid = createHash('sha256').update(JSON.stringify({ e: jwk.e, kty: 'RSA', n: jwk.n })).digest('base64url');
      this.algorithm = 'RS256';
      this.signingKey = env.JWT_PRIVATE_KEY;
      this.verifyKey = env.JWT_PUBLIC_KEY;
      this.kid = kid;
      this.jwk = { kty: 'RSA', n: jwk.n, e: jwk.e, alg: 'RS256', use: 'sig', kid };
    } else {
      this.algorithm = 'HS256';
      this.signingKey = env.JWT_SECRET;
      this.verifyKey = env.JWT_SECRET;
    }
  }
}
