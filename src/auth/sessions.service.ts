import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectRepository } from '@nestjs/typeorm';
import { LessThanOrEqual, Repository } from 'typeorm';
import { unauthorized } from '../common/errors/api-exception.js';
import type { Env } from '../config/env.validation.js';
import type { UserResponse } from '../users/user.response.js';
import { UsersService } from '../users/users.service.js';
import { sha256 } from './hashing.js';
import type { AuthUser } from './auth-user.js';
import { Session } from './session.entity.js';

/** The session cookie's name (SPEC §3). */
export const SESSION_COOKIE = 'sid';

/** What `POST /v1/sessions` and `GET /v1/sessions/current` return. */
export interface SessionView {
  user: UserResponse;
  csrf_token: string;
  /** ISO 8601: the absolute end; the session ends earlier after SESSION_IDLE_TTL seconds unused. */
  expires_at: string;
}

/**
 * Server-side sessions (SPEC §3 session cookie): a random 32-byte id in the `sid` cookie, stored
 * only as its SHA-256; a CSRF token per session; idle (SESSION_IDLE_TTL) and absolute
 * (SESSION_ABSOLUTE_TTL) expiry, both in seconds.
 */
@Injectable()
export class SessionsService {
  private readonly idleMs: number;
  private readonly absoluteMs: number;

  constructor(
    @InjectRepository(Session) private readonly sessions: Repository<Session>,
    private readonly users: UsersService,
    config: ConfigService<Env, true>,
  ) {
    this.idleMs = config.get('SESSION_IDLE_TTL', { infer: true }) * 1000;
    this.absoluteMs = config.get('SESSION_ABSOLUTE_TTL', { infer: true }) * 1000;
  }

  /** Session lifetime in milliseconds for the cookie's Max-Age (the absolute one). */
  get absoluteTtlMs(): number {
    return this.absoluteMs;
  }

  /**
   * Starts a session for an authenticated user; `previousSid` (a cookie the client still sent) is
   * destroyed, so the id is new at every login. Returns the cookie value and the session view.
   */
  async create(userId: number, previousSid?: string): Promise<{ sid: string; view: SessionView }> {
    if (previousSid) await this.sessions.delete({ id_hash: sha256(previousSid) });
    await this.sessions.delete({ user_id: userId, expires_at: LessThanOrEqual(new Date()) });
    const sid = randomBytes(32).toString('base64url');
    const now = new Date();
    const session = this.sessions.create({
      id_hash: sha256(sid),
      user_id: userId,
      csrf_token: randomBytes(24).toString('base64url'),
      created_at: now,
      last_seen_at: now,
      expires_at: new Date(now.getTime() + this.absoluteMs),
    });
    await this.sessions.insert(session);
    return { sid, view: await this.view(session) };
  }

  /**
   * Resolves a `sid` cookie value to its user; null when unknown, idle too long or past its
   * absolute end (an ended session is deleted). Refreshes `last_seen_at` (at most every 10 s).
   */
  async authenticate(sid: string): Promise<AuthUser | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(sid)) return null;
    const idHash = sha256(sid);
    const session = await this.sessions.findOne({ where: { id_hash: idHash } });
    if (!session) return null;
    const now = Date.now();
    if (session.expires_at.getTime() <= now || session.last_seen_at.getTime() + this.idleMs <= now) {
      await this.sessions.delete({ id_hash: idHash });
      return null;
    }
    const user = await this.users.findCredentialsById(session.user_id);
    if (!user) return null;
    if (now - session.last_seen_at.getTime() >= 10_000) await this.sessions.update({ id_hash: idHash }, { last_seen_at: new Date(now) });
    return { id: user.id, role: user.role, scheme: 'session', sessionIdHash: idHash, csrfToken: session.csrf_token };
  }

  /** The caller's current session. @throws 401 when the caller did not use the session cookie or it just ended. */
  async current(caller: AuthUser): Promise<SessionView> {
    const session = caller.sessionIdHash ? await this.sessions.findOne({ where: { id_hash: caller.sessionIdHash } }) : null;
    if (!session) throw unauthorized('this operation needs the session cookie');
    return this.view(session);
  }

  /** Destroys the caller's current session. @throws 401 when the caller did not use the session cookie. */
  async destroy(caller: AuthUser): Promise<void> {
    if (!caller.sessionIdHash) throw unauthorized('this operation needs the session cookie');
    await this.sessions.delete({ id_hash: caller.sessionIdHash });
  }

  private async view(session: Session): Promise<SessionView> {
    return { user: await this.users.findOne(session.user_id), csrf_token: session.csrf_token, expires_at: session.expires_at.toISOString() };
  }
}
