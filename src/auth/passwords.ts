import argon2 from 'argon2';

/**
 * Hashes a password with argon2id (docs/authentication.md#overview: memory-hard hash): 19 MiB memory, 2 passes, 1 lane
 * (the OWASP baseline). Returns the PHC string (salt and parameters included).
 */
export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 });
}

/** Checks a password against a PHC hash; false for a mismatch or a malformed hash, never throws. */
export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/** Spends the time of one verification for an unknown username, so both failures take as long. */
export async function verifyAgainstDummy(password: string): Promise<void> {
  dummyHash ??= hashPassword('dummy-password-for-timing');
  await verifyPassword(await dummyHash, password);
}
