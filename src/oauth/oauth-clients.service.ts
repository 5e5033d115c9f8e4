import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { AuthUser } from '../common/caller/auth-user.js';
import { sha256 } from '../auth/hashing.js';
import { notFound } from '../common/errors/api-exception.js';
import { findPage } from '../common/list/find-page.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { deleteExisting } from '../common/writes/conditional-write.js';
import type { CreateOAuthClientDto } from './dto/create-oauth-client.dto.js';
import { OAuthClient } from './oauth-client.entity.js';
import { OAUTH_CLIENTS_FIELDS } from './oauth-clients.resource.js';
import { type CreatedOAuthClientResponse, type OAuthClientResponse, toOAuthClientResponse } from './oauth-client.response.js';
import { OAuthGrantsService } from './oauth-grants.service.js';

/**
 * The OAuth client registry (admins only): `client_id` is `oc_` + 16 random bytes, a
 * confidential client's secret `cs_` + 32 random bytes (base64url), shown once and stored as
 * SHA-256 (a high-entropy random secret needs no slow hash).
 */
@Injectable()
export class OAuthClientsService {
  constructor(
    @InjectRepository(OAuthClient) private readonly clients: Repository<OAuthClient>,
    private readonly grants: OAuthGrantsService,
  ) {}

  /** Registers a client; returns it with `client_secret` for a confidential one (this once). */
  async create(dto: CreateOAuthClientDto, caller: AuthUser): Promise<CreatedOAuthClientResponse> {
    const secret = dto.confidential ? `cs_${randomBytes(32).toString('base64url')}` : undefined;
    const now = new Date();
    const row = await this.clients.save(
      this.clients.create({
        client_id: `oc_${randomBytes(16).toString('base64url')}`,
        name: dto.name,
        redirect_uris: dto.redirect_uris.join(' '),
        scopes: [...new Set(dto.scopes)].sort().join(' '),
        confidential: dto.confidential,
        secret_hash: secret ? sha256(secret) : null,
        created_by: caller.id,
        created_at: now,
        updated_at: now,
      }),
    );
    return secret ? { ...toOAuthClientResponse(row), client_secret: secret } : toOAuthClientResponse(row);
  }

  /** One page of the registered clients. */
  list(query: ListQuery): Promise<Page<OAuthClientResponse>> {
    return findPage(this.clients, query, OAUTH_CLIENTS_FIELDS, toOAuthClientResponse);
  }

  /** One client. @throws 404 when missing. */
  async findOne(id: number): Promise<OAuthClientResponse> {
    const row = await this.clients.findOne({ where: { id } });
    if (!row) throw notFound('oauth client', id);
    return toOAuthClientResponse(row);
  }

  /**
   * Deletes a client after revoking every grant of it (their access tokens answer 401), in one
   * conditional DELETE: of concurrent deletes exactly one succeeds.
   * @throws 404 when missing or deleted meanwhile.
   */
  async remove(id: number): Promise<void> {
    const row = await this.clients.findOne({ where: { id } });
    if (!row) throw notFound('oauth client', id);
    await this.grants.revokeAllOfClient(row.id);
    await deleteExisting(this.clients.manager, OAuthClient, { id: row.id }, 'oauth client', id);
  }

  /** The client with public identifier `clientId`, or null. */
  async findByClientId(clientId: string): Promise<OAuthClient | null> {
    if (!/^[\x21-\x7e]{1,64}$/.test(clientId)) return null;
    return this.clients.findOne({ where: { client_id: clientId } });
  }

  /** The client with row id `pk`, or null. */
  findByPk(pk: number): Promise<OAuthClient | null> {
    return this.clients.findOne({ where: { id: pk } });
  }

  /**
   * Client authentication at the token and revocation endpoints (RFC 6749 §2.3): a confidential
   * client must present its secret; a public client must not present one. Returns the client, or
   * null (→ 401 `invalid_client`).
   */
  async authenticate(clientId: string, secret: string | null | undefined): Promise<OAuthClient | null> {
    const client = await this.findByClientId(clientId);
    if (!client) return null;
    if (!client.confidential) return secret ? null : client;
    if (typeof secret !== 'string' || !client.secret_hash) return null;
    return timingSafeEqual(Buffer.from(sha256(secret)), Buffer.from(client.secret_hash)) ? client : null;
  }
}
