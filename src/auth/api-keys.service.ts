import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { notFound, validationFailed } from '../common/errors/api-exception.js';
import { findPage } from '../common/list/find-page.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { UsersService } from '../users/users.service.js';
import { ApiKey } from './api-key.entity.js';
import { API_KEYS_FIELDS } from './api-keys.resource.js';
import { type ApiKeyResponse, type CreatedApiKeyResponse, toApiKeyResponse } from './api-key.response.js';
import { sha256 } from './hashing.js';
import type { AuthUser } from '../common/caller/auth-user.js';
import type { CreateApiKeyDto } from './dto/create-api-key.dto.js';

/** `last_used_at` is written at most this often per key (ms), to keep reads from becoming writes. */
const LAST_USED_GRANULARITY_MS = 60_000;

/**
 * API keys (docs/authentication.md#api-keys): `rk_` + 32 random bytes (base64url), stored as SHA-256 with a visible prefix;
 * a key acts as its user limited to its scopes, until `expires_at` or deletion.
 */
@Injectable()
export class ApiKeysService {
  constructor(
    @InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>,
    private readonly users: UsersService,
  ) {}

  /**
   * Creates a key for the caller and returns it with the key itself, shown this once.
   * @throws 422 when `expires_at` is not in the future.
   */
  async create(dto: CreateApiKeyDto, caller: AuthUser): Promise<CreatedApiKeyResponse> {
    const expiresAt = dto.expires_at ? new Date(dto.expires_at) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw validationFailed([{ field: 'expires_at', message: 'expires_at must be in the future' }]);
    }
    const key = `rk_${randomBytes(32).toString('base64url')}`;
    const row = await this.keys.save(
      this.keys.create({
        user_id: caller.id,
        name: dto.name,
        prefix: key.slice(0, 11),
        key_hash: sha256(key),
        scopes: [...new Set(dto.scopes)].sort().join(' '),
        expires_at: expiresAt,
        last_used_at: null,
        created_at: new Date(),
      }),
    );
    return { ...toApiKeyResponse(row), key };
  }

  /** One page of the caller's own keys. */
  list(query: ListQuery, caller: AuthUser): Promise<Page<ApiKeyResponse>> {
    return findPage({ repository: this.keys, where: 'k.user_id = :me', params: { me: caller.id } }, query, API_KEYS_FIELDS, toApiKeyResponse);
  }

  /** Revokes (deletes) one of the caller's keys. @throws 404 when it is not one of theirs. */
  async remove(id: number, caller: AuthUser): Promise<void> {
    const result = await this.keys.delete({ id, user_id: caller.id });
    if (!result.affected) throw notFound('api key', id);
  }

  /**
   * Resolves an `X-API-Key` value to its user, limited to the key's scopes; null when unknown,
   * expired or its user is gone. Compares the stored hash in constant time and keeps
   * `last_used_at` current (to the minute).
   */
  async authenticate(presented: string): Promise<AuthUser | null> {
    if (!/^rk_[A-Za-z0-9_-]{43}$/.test(presented)) return null;
    const hash = sha256(presented);
    const row = await this.keys.findOne({ where: { key_hash: hash } });
    if (!row || !timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(hash))) return null;
    const now = Date.now();
    if (row.expires_at && row.expires_at.getTime() <= now) return null;
    const user = await this.users.findCredentialsById(row.user_id);
    if (!user) return null;
    if (!row.last_used_at || now - row.last_used_at.getTime() >= LAST_USED_GRANULARITY_MS) {
      await this.keys.update({ id: row.id }, { last_used_at: new Date(now) });
    }
    return { id: user.id, role: user.role, scheme: 'api_key', scopes: row.scopes.split(' ').filter(Boolean), apiKeyId: row.id };
  }
}
