import { createHash, createPrivateKey, createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import type { JwtSignOptions, JwtVerifyOptions } from '@nestjs/jwt';
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
 * The access-token keys (docs/authentication.md#the-access-token): HS256 with JWT_SECRET by default; RS256 with
 * JWT_PRIVATE_KEY/JWT_PUBLIC_KEY when set, with `kid` the RFC 7638 thumbprint of the public key.
 * The algorithm is pinned: verification accepts only `algorithm`.
 *
 * The keys are node `KeyObject`s made once, at start-up: jsonwebtoken parses a string key into
 * one on every `sign` and `verify` (for an HS256 secret it first tries, and fails, to read it as
 * a PEM public key), which was the largest single cost of an authenticated request. Given a
 * `KeyObject`, it uses it as is.
 */
export class JwtKeys {
  readonly algorithm: 'HS256' | 'RS256';
  /** Key for signing: the secret key, or the private key. */
  readonly signingKey: KeyObject;
  /** Key for verifying: the secret key, or the public key. */
  readonly verifyKey: KeyObject;
  /** Key id for the JWT header (RS256 only). */
  readonly kid?: string;
  /** The published public key (RS256 only). */
  readonly jwk?: PublicJwk;
  /** JwtService sign options of every access token: the pinned algorithm, the signing key and (RS256) `kid`. */
  readonly signOptions: Readonly<JwtSignOptions>;
  /** JwtService verify options of every access token: only the pinned algorithm, the verifying key. */
  readonly verifyOptions: Readonly<JwtVerifyOptions>;

  constructor(env: Pick<Env, 'JWT_SECRET' | 'JWT_PRIVATE_KEY' | 'JWT_PUBLIC_KEY'>) {
    if (env.JWT_PRIVATE_KEY && env.JWT_PUBLIC_KEY) {
      this.verifyKey = createPublicKey(env.JWT_PUBLIC_KEY);
      const jwk = this.verifyKey.export({ format: 'jwk' }) as { n: string; e: string };
      const kid = createHash('sha256')
        .update(JSON.stringify({ e: jwk.e, kty: 'RSA', n: jwk.n }))
        .digest('base64url');
      this.algorithm = 'RS256';
      this.signingKey = createPrivateKey(env.JWT_PRIVATE_KEY);
      this.kid = kid;
      this.jwk = { kty: 'RSA', n: jwk.n, e: jwk.e, alg: 'RS256', use: 'sig', kid };
    } else {
      this.algorithm = 'HS256';
      // the bytes jsonwebtoken would use for a string secret (its UTF-8 encoding)
      this.signingKey = createSecretKey(Buffer.from(env.JWT_SECRET, 'utf8'));
      this.verifyKey = this.signingKey;
    }
    this.signOptions = { algorithm: this.algorithm, privateKey: this.signingKey, ...(this.kid ? { keyid: this.kid } : {}) };
    // JwtVerifyOptions types `publicKey` as a string or Buffer; JwtService hands it to jsonwebtoken.verify, which takes a KeyObject
    this.verifyOptions = { algorithms: [this.algorithm], publicKey: this.verifyKey as unknown as Buffer };
  }
}
