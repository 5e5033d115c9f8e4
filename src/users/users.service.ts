import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, In, IsNull, Not, Repository } from 'typeorm';
import type { AuthUser } from '../common/caller/auth-user.js';
import { authorize } from '../common/access/access-policy.js';
import { hashPassword } from '../auth/passwords.js';
import { type ApiException, conflict, forbidden, notFound, validationFailed } from '../common/errors/api-exception.js';
import { findPage } from '../common/list/find-page.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { deleteVersioned, updateVersioned } from '../common/writes/conditional-write.js';
import { type Tagged, tagged, versionCondition, type WritePreconditions } from '../common/writes/preconditions.js';
import type { Env } from '../config/env.validation.js';
import { insertRow } from '../database/insert-row.js';
import { inBothVersions } from '../events/event-data.js';
import { EventOutbox } from '../events/event-outbox.js';
import type { CreateUserDto } from './dto/create-user.dto.js';
import type { ReplaceUserDto, UpdateUserDto } from './dto/replace-user.dto.js';
import { User } from './user.entity.js';
import { UserLifecycle, type UserLifecycleEvent } from './user-lifecycle.js';
import { toUserResponse, type UserResponse } from './user.response.js';
import type { UserSummary } from './user-summary.response.js';
import { USERS_FIELDS } from './users.resource.js';
import { USERS_POLICY } from './users.policy.js';

/** How long (ms) a user id found to exist is trusted without asking the database again (see UsersService.exists). */
const EXISTS_CACHE_MS = 5 * 60 * 1000;
/** At most this many ids are remembered; the oldest goes first. */
const EXISTS_CACHE_SIZE = 10_000;

/**
 * Users (docs/resources/users.md): registration, reads, replace/update, delete, admin bootstrap. The only
 * holder of the users repository; other modules call it. A rename, a new password or role and a
 * deletion raise their {@link UserLifecycle} events in the change's transaction
 * (docs/extending.md#user-lifecycle-events): the modules owning what depends on the user react.
 */
@Injectable()
export class UsersService implements OnApplicationBootstrap {
  private readonly logger = new Logger(UsersService.name);
  /** User ids known to exist → until when (epoch ms); see {@link exists}. */
  private readonly known = new Map<number, number>();

  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    private readonly config: ConfigService<Env, true>,
    private readonly lifecycle: UserLifecycle,
    private readonly outbox: EventOutbox,
  ) {}

  /** Creates the first admin from ADMIN_USERNAME/ADMIN_PASSWORD when no admin exists (docs/authentication.md#roles-and-scopes). */
  async onApplicationBootstrap(): Promise<void> {
    const username = this.config.get('ADMIN_USERNAME', { infer: true });
    const password = this.config.get('ADMIN_PASSWORD', { infer: true });
    if (!username || !password) return;
    if (await this.users.exists({ where: { role: 'admin' } })) return;
    if (await this.users.exists({ where: { username } })) {
      this.logger.warn(`ADMIN_USERNAME ${username} belongs to an existing non-admin user; no admin was created`);
      return;
    }
    const now = new Date();
    try {
      await this.users.insert({ username, password_hash: await hashPassword(password), name: username, role: 'admin', created_at: now, updated_at: now });
      this.logger.log(`created admin user ${username}`);
    } catch (error) {
      if (!(await this.users.exists({ where: { role: 'admin' } }))) throw error; // another instance won the race otherwise
    }
  }

  /**
   * Public registration: returns the new user with role `user`, built from the row written in one
   * INSERT (every column is set here, the id comes from the INSERT): nothing is read back. With an
   * `email`, the INSERT and the `user.email_changed` reactions (the verification mail,
   * docs/authentication.md#e-mail-verification) share one transaction.
   * @throws 403 when `role` asks for anything but `user`; 409 when the username or email is taken.
   */
  async create(dto: CreateUserDto): Promise<Tagged<UserResponse>> {
    if (dto.role !== undefined && dto.role !== 'user') throw forbidden('only admins can set role; registration creates a user');
    const email = dto.email?.toLowerCase() ?? null;
    await this.assertUnique(dto.username, email);
    const now = new Date();
    const row = {
      username: dto.username,
      password_hash: await hashPassword(dto.password),
      name: dto.name,
      age: dto.age ?? null,
      email,
      email_verified_at: null,
      role: 'user' as const,
      created_at: now,
      updated_at: now,
      version: 1,
    };
    if (email === null) return tagged(toUserResponse({ ...row, id: await insertRow(this.users, row) }), row.version);
    // no fence runs before: there is no user yet whose tokens a fence could stamp
    const events: UserLifecycleEvent[] = ['user.email_changed'];
    const id = await this.users.manager.transaction(async (manager) => {
      const inserted = await insertRow(manager.getRepository(User), row);
      await this.lifecycle.emit(events, { manager, userId: inserted, at: now, email });
      return inserted;
    });
    await this.lifecycle.afterCommit(events, id);
    return tagged(toUserResponse({ ...row, id }), row.version);
  }

  /** One page of users, admins only (the operation's role; {@link USERS_POLICY} `visible` is every user for them). */
  list(query: ListQuery, caller: AuthUser): Promise<Page<UserResponse>> {
    return findPage(this.users, query, USERS_FIELDS, toUserResponse, USERS_POLICY.visible(caller));
  }

  /**
   * Reads one user: the user itself or an admin ({@link USERS_POLICY}).
   * @throws 403 for anyone else, whether or not the id exists; 404 when it does not exist.
   */
  async findOne(id: number, caller: AuthUser): Promise<Tagged<UserResponse>> {
    authorize(USERS_POLICY, 'read', caller, { id }, id);
    const row = await this.row(id);
    return tagged(toUserResponse(row), row.version);
  }

  /**
   * User `id` as the API shows it, without an access check: for the caller's own record (the
   * session, the OAuth consent page) and after {@link findOne}'s check. @throws 404 when it does not exist.
   */
  async profile(id: number): Promise<UserResponse> {
    return toUserResponse(await this.row(id));
  }

  /** The row of user `id`. @throws 404 when it does not exist. */
  private async row(id: number): Promise<User> {
    const row = await this.users.findOne({ where: { id } });
    if (!row) throw notFound('user', id);
    return row;
  }

  /**
   * The summaries (`{id, username, name}`) of the given users in one query, for embedding authors
   * (API v2): id → summary; unknown ids are absent. Visible to any caller who may read what the
   * user authored.
   */
  async summaries(ids: number[]): Promise<Map<number, UserSummary>> {
    const unique = [...new Set(ids)];
    const rows = unique.length === 0 ? [] : await this.users.find({ where: { id: In(unique) }, select: { id: true, username: true, name: true } });
    return new Map(rows.map((row) => [row.id, { id: row.id, username: row.username, name: row.name }]));
  }

  /** The user with its password hash and e-mail state, for password sign-in; null when unknown. */
  findCredentials(username: string): Promise<Pick<User, 'id' | 'role' | 'password_hash' | 'email' | 'email_verified_at'> | null> {
    return this.users.findOne({ where: { username }, select: { id: true, role: true, password_hash: true, email: true, email_verified_at: true } });
  }

  /**
   * Whether user `id` exists, for every bearer request (JwtStrategy): a positive answer is cached
   * in process for EXISTS_CACHE_MS (at most EXISTS_CACHE_SIZE ids), so a live user costs one
   * indexed primary-key lookup per instance and interval, not one per request; an unknown id is
   * looked up every time and never cached. A cached "exists" is safe after a deletion on another
   * instance: the deletion's not-before stamp (TokenDenyList.revokeUser, read in the same request)
   * denies every token issued before it. @throws 503 when the database is unavailable.
   */
  async exists(id: number): Promise<boolean> {
    const now = Date.now();
    const until = this.known.get(id);
    if (until !== undefined && until > now) return true;
    this.known.delete(id);
    if (!(await this.users.exists({ where: { id } }))) return false;
    if (this.known.size >= EXISTS_CACHE_SIZE) this.known.delete(this.known.keys().next().value as number);
    this.known.set(id, now + EXISTS_CACHE_MS);
    return true;
  }

  /** The user's id, role, creation and last password change, for token refresh and sessions; null when deleted. */
  findCredentialsById(id: number): Promise<Pick<User, 'id' | 'role' | 'created_at' | 'password_changed_at'> | null> {
    return this.users.findOne({ where: { id }, select: { id: true, role: true, created_at: true, password_changed_at: true } });
  }

  /**
   * The id of the user a password-reset mail may go to at `email` (compared lower-cased, as
   * stored): the user with this address, unless the address was changed after registration and is
   * not verified yet (docs/authentication.md#password-reset); null otherwise.
   */
  async findIdForPasswordReset(email: string): Promise<number | null> {
    const address = email.toLowerCase();
    const row = await this.users.findOne({
      where: [
        { email: address, email_changed_at: IsNull() },
        { email: address, email_verified_at: Not(IsNull()) },
      ],
      select: { id: true },
    });
    return row?.id ?? null;
  }

  /** User `id`'s address and when it was verified, for a new verification mail. @throws 404 when the user does not exist. */
  async emailState(id: number): Promise<Pick<User, 'email' | 'email_verified_at'>> {
    const row = await this.users.findOne({ where: { id }, select: { id: true, email: true, email_verified_at: true } });
    if (!row) throw notFound('user', id);
    return { email: row.email, email_verified_at: row.email_verified_at };
  }

  /**
   * Marks `email` verified for user `id` without an access check (the verification token is the
   * authority: docs/authentication.md#e-mail-verification), in one transaction: `within` first (the
   * verification consumes its token there), then `email_verified_at` and `updated_at` set and the
   * version incremented by one UPDATE conditional on the user still having `email`.
   * @throws what `within` throws; `invalid()` when the user is gone or has another address now.
   */
  async markEmailVerified(id: number, email: string, within: (manager: EntityManager) => Promise<void>, invalid: () => ApiException): Promise<void> {
    await this.users.manager.transaction(async (manager) => {
      await within(manager);
      const current = await manager.findOne(User, { where: { id }, select: { id: true, version: true, email: true } });
      if (!current || current.email !== email) throw invalid();
      const at = new Date();
      await updateVersioned(manager, User, { id, email }, current.version, undefined, { email_verified_at: at, updated_at: at }, 'user', id, invalid);
    });
  }

  /**
   * Sets user `id`'s password without an access check (a password reset, whose token is the
   * authority: docs/authentication.md#password-reset): `within` runs first in the change's
   * transaction (the reset consumes its token there; what it throws rolls everything back), then
   * the user's row (new hash, `password_changed_at`, `updated_at`, version + 1) and the
   * `user.password_changed` reactions — every access token, refresh token, session and reset token
   * of the user ends — as a PATCH of the password does.
   * @throws what `within` throws; 404 when the user no longer exists; 503 when the shared store is unavailable.
   */
  async setPassword(id: number, password: string, within: (manager: EntityManager) => Promise<void>): Promise<void> {
    const passwordHash = await hashPassword(password);
    const events: UserLifecycleEvent[] = ['user.password_changed'];
    await this.lifecycle.before(events, id);
    await this.users.manager.transaction(async (manager) => {
      await within(manager);
      const current = await manager.findOne(User, { where: { id }, select: { id: true, version: true } });
      if (!current) throw notFound('user', id);
      const at = new Date();
      await updateVersioned(
        manager,
        User,
        { id },
        current.version,
        undefined,
        { password_hash: passwordHash, password_changed_at: at, updated_at: at },
        'user',
        id,
      );
      await this.lifecycle.emit(events, { manager, userId: id, at });
    });
    await this.lifecycle.afterCommit(events, id);
  }

  /**
   * PUT: replaces the user's editable fields; omitted `age`/`email` become null (docs/writes.md#put-replace). A role
   * or password change revokes the user's earlier access tokens (and, for a password, refresh tokens); a
   * rename changes the v2 articles and comments that embed the user; a new address is unverified
   * (`email_verified_at` null), gets a verification mail and ends the reset and verification links
   * of the old one — the auth, articles and comments modules' reactions to its {@link UserLifecycle}
   * events, committed with the change or not at all.
   * @throws 403 (not the user itself or an admin; role change by non-admin), 404, 409 (email taken), 422 (username change), 503 (store unavailable).
   */
  replace(id: number, dto: ReplaceUserDto, caller: AuthUser, preconditions?: WritePreconditions): Promise<Tagged<UserResponse>> {
    return this.applyChanges(
      id,
      { name: dto.name, age: dto.age ?? null, email: dto.email ?? null, role: dto.role, username: dto.username, password: dto.password },
      caller,
      preconditions,
    );
  }

  /**
   * PATCH: changes only the fields sent; `null` clears `age`/`email` (docs/writes.md#patch-json-merge-patch). Revocation as {@link replace}.
   * @throws 403 (not the user itself or an admin; role change by non-admin), 404, 409 (email taken), 422 (username change), 503 (store unavailable).
   */
  update(id: number, dto: UpdateUserDto, caller: AuthUser, preconditions?: WritePreconditions): Promise<Tagged<UserResponse>> {
    return this.applyChanges(id, dto, caller, preconditions);
  }

  /**
   * Deletes a user; their rows (todos, refresh tokens, API keys, …) go by foreign-key cascade, their
   * access tokens are denied at once (the auth module's reaction to the `user.deleted` lifecycle event,
   * docs/authentication.md#logging-out-and-the-deny-list: authority is current) and
   * their sessions end at next use. One conditional DELETE: of concurrent deletes exactly one succeeds.
   * `user.deleted` (the user as `GET /users/{id}` showed it, owned by the deleted id: in practice
   * admins see it) is appended in the same transaction; what the cascade removes emits nothing more.
   * @throws 403 when the caller is neither the user nor an admin (whether or not the id exists,
   *   {@link USERS_POLICY}); 404 when there is no such user (or it was deleted meanwhile); 503 when
   *   the shared store is unavailable (nothing deleted).
   */
  async remove(id: number, caller: AuthUser, preconditions?: WritePreconditions): Promise<void> {
    authorize(USERS_POLICY, 'write', caller, { id }, id);
    const current = await this.users.findOne({ where: { id } });
    if (!current) throw notFound('user', id);
    // If-Match before anything is revoked (evaluated again by the conditional DELETE)
    versionCondition(preconditions, 'user', id, current.version);
    const events: UserLifecycleEvent[] = ['user.deleted'];
    const at = new Date();
    // first (the access tokens' revocation), so that a store outage (503) leaves the user in place rather than their tokens alive
    await this.lifecycle.before(events, id);
    try {
      await this.users.manager.transaction(async (manager) => {
        await deleteVersioned(manager, User, { id }, current.version, preconditions, 'user', id);
        await this.outbox.append(manager, { type: 'user.deleted', ownerId: id, resourceId: id, data: inBothVersions(() => toUserResponse(current)) });
        await this.lifecycle.emit(events, { manager, userId: id, at });
      });
    } finally {
      this.known.delete(id);
    }
    // again once deleted: a token issued from a read made before the deletion falls before this stamp
    await this.lifecycle.afterCommit(events, id);
  }

  /** PUT and PATCH: the checks, the revocations and one conditional UPDATE (see {@link replace}); the user as written, tagged with its new version. */
  private async applyChanges(
    id: number,
    changes: UpdateUserDto,
    caller: AuthUser,
    preconditions: WritePreconditions | undefined,
  ): Promise<Tagged<UserResponse>> {
    authorize(USERS_POLICY, 'write', caller, { id }, id);
    const current = await this.users.findOne({ where: { id } });
    if (!current) throw notFound('user', id);
    // If-Match before the content is checked (RFC 9110 §13.2.1) and anything is revoked; evaluated again by the UPDATE
    versionCondition(preconditions, 'user', id, current.version);
    if (changes.username !== undefined && changes.username !== current.username) {
      throw validationFailed([{ field: 'username', message: 'username cannot be changed' }]);
    }
    if (changes.role !== undefined && changes.role !== current.role) authorize(USERS_POLICY, 'setRole', caller, current, id);
    const patch: Partial<User> = { updated_at: new Date() };
    if (changes.name !== undefined) patch.name = changes.name;
    if (changes.age !== undefined) patch.age = changes.age;
    const emailChanged = changes.email !== undefined && (changes.email?.toLowerCase() ?? null) !== current.email;
    if (changes.email !== undefined) {
      patch.email = changes.email === null ? null : changes.email.toLowerCase();
      if (patch.email !== null && emailChanged) await this.assertUnique(undefined, patch.email);
    }
    if (emailChanged) {
      // a new address is unverified, and gets no password-reset mail until it is (docs/authentication.md#e-mail-verification)
      patch.email_verified_at = null;
      patch.email_changed_at = patch.updated_at;
    }
    if (changes.role !== undefined) patch.role = changes.role;
    if (changes.password !== undefined) {
      patch.password_hash = await hashPassword(changes.password);
      patch.password_changed_at = patch.updated_at;
    }
    // what the other modules react to (docs/extending.md#user-lifecycle-events): a name embedded in v2 articles and comments, the authority of tokens
    const events: UserLifecycleEvent[] = [];
    if (patch.name !== undefined && patch.name !== current.name) events.push('user.renamed');
    if (changes.password !== undefined) events.push('user.password_changed');
    if (changes.role !== undefined && changes.role !== current.role) events.push('user.role_changed');
    if (emailChanged) events.push('user.email_changed');
    // a store outage (503) before the change leaves it undone rather than old tokens alive
    await this.lifecycle.before(events, id);
    const version = await this.users.manager.transaction(async (manager) => {
      const written = await updateVersioned(manager, User, { id }, current.version, preconditions, patch, 'user', id);
      // in the same transaction: the change never commits without its consequences
      await this.lifecycle.emit(events, { manager, userId: id, at: patch.updated_at!, ...(emailChanged && { email: patch.email }) });
      return written;
    });
    // again once committed: a token issued from a read of the old state falls before this stamp
    await this.lifecycle.afterCommit(events, id);
    // the user as written: the loaded row with the change (no read after the commit)
    return tagged(toUserResponse({ ...current, ...patch, version }), version);
  }

  private async assertUnique(username: string | undefined, email: string | null): Promise<void> {
    if (username !== undefined && (await this.users.exists({ where: { username } }))) throw conflict(`username ${username} is already taken`);
    if (email !== null && (await this.users.exists({ where: { email } }))) throw conflict(`email ${email} is already taken`);
  }
}
