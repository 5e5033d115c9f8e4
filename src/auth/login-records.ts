import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, LessThanOrEqual, MoreThan, Repository } from 'typeorm';
import { findPage } from '../common/list/find-page.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import type { Row } from '../common/list/field-table.js';
import { Login, type LoginKind } from './login.entity.js';
import { LOGINS_FIELDS } from './logins.resource.js';

/** Where a login came from: the client address (`req.ip`) and the `User-Agent` header, as received. */
export interface LoginClient {
  address: string;
  userAgent?: string;
}

/** A logins row as a list or read hands it on: `kind` and `handle` always. */
export type LoginRow = Row<Login, 'kind' | 'handle'>;

/**
 * The `logins` table (docs/authentication.md#your-logins): a row per token family or cookie
 * session, written when it starts, pushed on a refresh, deleted when it ends. Rows past their
 * `expires_at` are never listed and are deleted when their user next logs in.
 */
@Injectable()
export class LoginRecords {
  constructor(@InjectRepository(Login) private readonly logins: Repository<Login>) {}

  /** Records a login of `userId` that started now from `client` and ends at `expiresAt` unless used. */
  async start(kind: LoginKind, handle: string, userId: number, client: LoginClient, expiresAt: Date): Promise<void> {
    const now = new Date();
    await this.logins.delete({ user_id: userId, expires_at: LessThanOrEqual(now) });
    await this.logins.insert({
      user_id: userId,
      kind,
      handle,
      address: client.address.slice(0, 64),
      user_agent: (client.userAgent ?? '').slice(0, 256),
      created_at: now,
      last_used_at: now,
      expires_at: expiresAt,
    });
  }

  /** A token login was refreshed now; it now ends at `expiresAt` (its new refresh token's expiry) unless used. */
  async refreshed(familyId: string, expiresAt: Date): Promise<void> {
    await this.logins.update({ kind: 'token', handle: familyId }, { last_used_at: new Date(), expires_at: expiresAt });
  }

  /** A login ended: its row goes. */
  async ended(kind: LoginKind, handle: string): Promise<void> {
    await this.logins.delete({ kind, handle });
  }

  /** Deletes rows by id (sessions found ended in the store). */
  async remove(ids: number[]): Promise<void> {
    if (ids.length > 0) await this.logins.delete({ id: In(ids) });
  }

  /** One page of `userId`'s unexpired logins, in the list grammar (docs/lists.md). */
  page(query: ListQuery, userId: number): Promise<Page<LoginRow>> {
    return findPage(
      { repository: this.logins, where: 'l.user_id = :me AND l.expires_at > :now', params: { me: userId, now: new Date() } },
      query,
      LOGINS_FIELDS,
      (row) => row,
    );
  }

  /** One of `userId`'s unexpired logins, or null. */
  one(id: number, userId: number): Promise<Login | null> {
    return this.logins.findOne({ where: { id, user_id: userId, expires_at: MoreThan(new Date()) } });
  }

  /** Every unexpired login of `userId`. */
  all(userId: number): Promise<Login[]> {
    return this.logins.find({ where: { user_id: userId, expires_at: MoreThan(new Date()) }, order: { id: 'ASC' } });
  }
}
