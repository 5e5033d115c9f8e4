import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../common/caller/auth-user.js';
import { notFound } from '../common/errors/api-exception.js';
import type { ListQuery } from '../common/list/list-query.js';
import { Page } from '../common/list/page.js';
import { AuthService } from './auth.service.js';
import type { Login } from './login.entity.js';
import { LoginRecords, type LoginRow } from './login-records.js';
import { type LoginKey, type LoginResponse, toLoginResponse } from './login.response.js';
import { SessionsService } from './sessions.service.js';

/** How many times a list reads its page again after finding sessions that ended in the store meanwhile. */
const SESSION_RECHECKS = 4;

/** The login a request was made with: a password login's access token (`fid`), or a session; none for OAuth tokens and API keys. */
export function ownLogin(caller: AuthUser): LoginKey | undefined {
  if (caller.scheme === 'session' && caller.sessionIdHash) return { kind: 'session', handle: caller.sessionIdHash };
  if (caller.scheme === 'bearer' && caller.fid && !caller.clientId) return { kind: 'token', handle: caller.fid };
  return undefined;
}

/**
 * The caller's logins (docs/authentication.md#your-logins): listing them and ending one or all.
 * Ending a token login revokes its refresh tokens and denies its access tokens (as logout does);
 * ending a session deletes it from the store. A session that ended by idleness is still a row until
 * read: a list checks the page's sessions in the store, deletes those gone, and reads the page again.
 */
@Injectable()
export class LoginsService {
  constructor(
    private readonly records: LoginRecords,
    private readonly auth: AuthService,
    private readonly sessions: SessionsService,
  ) {}

  /** One page of the caller's live logins, the caller's own marked `current`. @throws 503 when the store is unavailable. */
  async list(query: ListQuery, caller: AuthUser): Promise<Page<LoginResponse>> {
    const own = ownLogin(caller);
    for (let attempt = 0; ; attempt++) {
      const page = await this.records.page(query, caller.id);
      const seen = await this.sessions.lastSeen(page.items.filter((row) => row.kind === 'session').map((row) => row.handle));
      const gone = page.items.filter((row) => row.kind === 'session' && !seen.has(row.handle));
      if (gone.length === 0 || attempt === SESSION_RECHECKS) {
        const live = page.items.filter((row) => !gone.includes(row));
        return new Page(live, page.total, page.query, page.info).map((row) => toLoginResponse(row, own, seen.get(row.handle)));
      }
      await this.records.remove(gone.map((row) => Number(row.id)));
    }
  }

  /** One of the caller's live logins. @throws 404 when it is not one of theirs or has ended; 503 store unavailable. */
  async findOne(id: number, caller: AuthUser): Promise<LoginResponse> {
    const row = await this.live(id, caller);
    const seen = row.kind === 'session' ? await this.sessions.lastSeen([row.handle]) : undefined;
    return toLoginResponse(row as LoginRow, ownLogin(caller), seen?.get(row.handle));
  }

  /**
   * Ends one of the caller's logins; returns whether it was the caller's own.
   * @throws 404 when it is not one of theirs or has ended; 503 store unavailable.
   */
  async end(id: number, caller: AuthUser): Promise<boolean> {
    return this.endRow(await this.live(id, caller), ownLogin(caller));
  }

  /** Ends every login of the caller, the caller's own included; returns whether there was one. @throws 503 store unavailable. */
  async endAll(caller: AuthUser): Promise<boolean> {
    const own = ownLogin(caller);
    let current = false;
    for (const row of await this.records.all(caller.id)) current = (await this.endRow(row, own)) || current;
    return current;
  }

  private async live(id: number, caller: AuthUser): Promise<Login> {
    const row = await this.records.one(id, caller.id);
    if (!row) throw notFound('login', id);
    if (row.kind === 'session' && !(await this.sessions.lastSeen([row.handle])).has(row.handle)) {
      await this.records.remove([row.id]);
      throw notFound('login', id);
    }
    return row;
  }

  private async endRow(row: Login, own: LoginKey | undefined): Promise<boolean> {
    if (row.kind === 'token') await this.auth.endLogin(row.handle);
    else await this.sessions.end(row.handle);
    return own !== undefined && own.kind === row.kind && own.handle === row.handle;
  }
}
