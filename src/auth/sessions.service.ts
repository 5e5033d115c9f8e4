import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { unauthorized } from '../common/errors/api-exception.js';
import type { Env } from '../config/env.validation.js';
import { SharedStore } from '../store/shared-store.js';
import type { UserResponse } from '../users/user.response.js';
import { UsersService } from '../users/users.service.js';
import type { AuthUser } from '../common/caller/auth-user.js';
import { sha256 } from './hashing.js';
import { type LoginClient, LoginRecords } from './login-records.js';

/** The session cookie's name (docs/authentication.md#session-cookies). */
export const SESSION_COOKIE = 'sid';

/** What `POST /v1/sessions` and `GET /v1/sessions/current` return. */
export interface SessionView {
  user: UserResponse;
  csrf_token: string;
  /** ISO 8601: the absolute end; the session ends earlier after SESSION_IDLE_TTL seconds unused. */
  expires_at: string;
}

/** A session as stored (JSON) under `session:<SHA-256 of the sid>`; times in epoch milliseconds. */
interface StoredSession {
  user_id: number;
  csrf_token: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
  /** A session that may only enrol in two-factor authentication (REQUIRE_ADMIN_TOTP). */
  totp_setup?: true;
}

/** How often (ms) use of a session is written back to the store to push its idle end. */
const TOUCH_INTERVAL_MS = 10_000;

/**
 * Server-side sessions (docs/authentication.md#session-cookies): a random 32-byte id in the `sid` cookie, stored
 * only as its SHA-256, in the {@link SharedStore} (Redis with REDIS_URL, so every instance knows
 * every session — docs/operations.md#several-instances-and-redis); a CSRF token per session; idle (SESSION_IDLE_TTL) and absolute
 * (SESSION_ABSOLUTE_TTL) expiry, both in seconds, enforced by the entry's time to live. Fails
 * closed: with the store unavailable, every method rejects with 503 `service_unavailable`.
 */
@Injectable()
export class SessionsService {
  private readonly idleMs: number;
  private readonly absoluteMs: number;

  constructor(
    private readonly store: SharedStore,
    private readonly users: UsersService,
    private readonly records: LoginRecords,
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
   * Starts a session for an authenticated user, recorded among the user's logins with `client`
   * (docs/authentication.md#your-logins); `previousSid` (a cookie the client still sent) is
   * ended, so the id is new at every login. Returns the cookie value and the session view. The
   * user's profile is read and the login recorded first, so nothing can fail once the session is stored.
   * `totpSetup`: the session may only enrol in two-factor authentication (REQUIRE_ADMIN_TOTP).
   * @throws 404 when the user does not exist; 503 when the database or the store is unavailable.
   */
  async create(userId: number, previousSid: string | undefined, client: LoginClient, totpSetup = false): Promise<{ sid: string; view: SessionView }> {
    const user = await this.users.profile(userId);
    if (previousSid) await this.end(sha256(previousSid));
    const sid = randomBytes(32).toString('base64url');
    const now = Date.now();
    await this.records.start('session', sha256(sid), userId, client, new Date(now + this.absoluteMs));
    const session: StoredSession = {
      user_id: userId,
      csrf_token: randomBytes(24).toString('base64url'),
      created_at: now,
      last_seen_at: now,
      expires_at: now + this.absoluteMs,
      ...(totpSetup ? { totp_setup: true as const } : {}),
    };
    await this.save(sha256(sid), session, now);
    return { sid, view: viewOf(session, user) };
  }

  /**
   * Resolves a `sid` cookie value to its user; null when unknown, idle too long, past its
   * absolute end, its user was deleted, or the user's password was set since it began (such a
   * session is removed). Pushes the idle end at most
   * every 10 s. @throws 503 when the store is unavailable.
   */
  async authenticate(sid: string): Promise<AuthUser | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(sid)) return null;
    const idHash = sha256(sid);
    const session = await this.load(idHash);
    if (!session) return null;
    const now = Date.now();
    const user = await this.users.findCredentialsById(session.user_id);
    // a user created after the session is not its user: the id was freed by a deletion and reused;
    // a password set at or after the session's start ends it (docs/authentication.md#password-reset)
    const passwordChangedAt = user?.password_changed_at ? new Date(user.password_changed_at).getTime() : undefined;
    if (!user || user.created_at.getTime() > session.created_at || (passwordChangedAt !== undefined && passwordChangedAt >= session.created_at)) {
      await this.store.delete(key(idHash));
      return null;
    }
    if (now - session.last_seen_at >= TOUCH_INTERVAL_MS) await this.save(idHash, { ...session, last_seen_at: now }, now);
    return {
      id: user.id,
      role: user.role,
      scheme: 'session',
      sessionIdHash: idHash,
      csrfToken: session.csrf_token,
      ...(session.totp_setup ? { totpSetup: true as const } : {}),
    };
  }

  /** The caller's current session. @throws 401 when the caller did not use the session cookie or it just ended; 503 store unavailable. */
  async current(caller: AuthUser): Promise<SessionView> {
    const session = caller.sessionIdHash ? await this.load(caller.sessionIdHash) : null;
    if (!session) throw unauthorized('this operation needs the session cookie');
    return this.view(session);
  }

  /** Destroys the caller's current session. @throws 401 when the caller did not use the session cookie; 503 store unavailable. */
  async destroy(caller: AuthUser): Promise<void> {
    if (!caller.sessionIdHash) throw unauthorized('this operation needs the session cookie');
    await this.end(caller.sessionIdHash);
  }

  /** Ends the session whose id hashes to `idHash`: deleted from the store, then from the logins. @throws 503 store unavailable. */
  async end(idHash: string): Promise<void> {
    await this.store.delete(key(idHash));
    await this.records.ended('session', idHash);
  }

  /** The live sessions among `idHashes`, each with its last use (to 10 s). @throws 503 store unavailable. */
  async lastSeen(idHashes: readonly string[]): Promise<Map<string, Date>> {
    const loaded = await Promise.all(idHashes.map(async (idHash) => [idHash, await this.load(idHash)] as const));
    return new Map(loaded.flatMap(([idHash, session]) => (session ? [[idHash, new Date(session.last_seen_at)] as const] : [])));
  }

  /** Writes the session with a time to live ending at its idle or absolute end, whichever is first. */
  private async save(idHash: string, session: StoredSession, now: number): Promise<void> {
    await this.store.set(key(idHash), JSON.stringify(session), Math.min(session.last_seen_at + this.idleMs, session.expires_at) - now);
  }

  /** The live session for an id hash, or null; an ended one still stored (clock edge) is removed. */
  private async load(idHash: string): Promise<StoredSession | null> {
    const raw = await this.store.get(key(idHash));
    if (raw === null) return null;
    const session = JSON.parse(raw) as StoredSession;
    const now = Date.now();
    if (session.expires_at > now && session.last_seen_at + this.idleMs > now) return session;
    await this.store.delete(key(idHash));
    return null;
  }

  private async view(session: StoredSession): Promise<SessionView> {
    return viewOf(session, await this.users.profile(session.user_id));
  }
}

/** What the API shows of `session`, whose user is `user`. */
function viewOf(session: StoredSession, user: UserResponse): SessionView {
  return { user, csrf_token: session.csrf_token, expires_at: new Date(session.expires_at).toISOString() };
}

const key = (idHash: string) => `session:${idHash}`;
