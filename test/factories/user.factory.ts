import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AuthService } from '../../src/auth/auth.service.js';
import { hashPassword } from '../../src/auth/passwords.js';
import { User } from '../../src/users/user.entity.js';
import type { Role } from '../../src/common/caller/roles.js';

export const DEFAULT_PASSWORD = 'password-123';

let counter = 0;
let passwordHash: Promise<string> | undefined;

export interface CreatedUser {
  user: User;
  /** A valid access token of the user. */
  token: string;
  refreshToken: string;
}

/**
 * Inserts a user straight into the database (password {@link DEFAULT_PASSWORD}) and logs it in
 * through AuthService. Returns the row and a token pair.
 */
export async function createUser(app: INestApplication, overrides: Partial<User> & { role?: Role } = {}): Promise<CreatedUser> {
  counter += 1;
  passwordHash ??= hashPassword(DEFAULT_PASSWORD);
  const now = new Date();
  const repo = app.get(DataSource).getRepository(User);
  const saved = await repo.save(
    repo.create({
      username: `user_${process.pid}_${counter}`,
      name: `User ${counter}`,
      age: null,
      email: null,
      role: 'user',
      created_at: now,
      updated_at: now,
      ...overrides,
      password_hash: await passwordHash,
    }),
  );
  const pair = await app.get(AuthService).login(saved.username, DEFAULT_PASSWORD);
  if (!('token' in pair)) throw new Error('createUser: the new user has two-factor authentication on');
  return { user: saved, token: pair.token, refreshToken: pair.refresh_token };
}

/** `Authorization` header value for a token. */
export const bearer = (token: string) => `Bearer ${token}`;
