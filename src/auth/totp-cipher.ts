import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** The version prefix of a stored ciphertext, so that a later format or key can be told apart. */
const FORMAT = 'v1';

/**
 * Encryption at rest of two-factor secrets (docs/authentication.md#two-factor-authentication-totp):
 * AES-256-GCM under the configured 32-byte key, a random 96-bit IV per value and the user's id as
 * associated data (a ciphertext copied to another account does not decrypt). Stored as
 * `v1.<iv>.<tag>.<ciphertext>`, each part base64url.
 */
export class TotpCipher {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the TOTP encryption key must be 32 bytes');
  }

  /** Encrypts `secret` (the base32 text) for user `userId`. */
  encrypt(secret: string, userId: number): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(`user:${userId}`));
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return [FORMAT, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  /**
   * The secret of user `userId` from its stored form.
   * @throws Error when the value is not of this format, or was not encrypted under this key for this user.
   */
  decrypt(stored: string, userId: number): string {
    const [format, iv, tag, body] = stored.split('.');
    if (format !== FORMAT || iv === undefined || tag === undefined || body === undefined) throw new Error('not a stored TOTP secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(`user:${userId}`));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}
