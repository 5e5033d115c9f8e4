import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, MoreThan, Repository } from 'typeorm';
import type { AuthUser } from '../common/caller/auth-user.js';
import { TokenDenyList } from '../auth/deny-list.js';
import { notFound } from '../common/errors/api-exception.js';
import { findPage } from '../common/list/find-page.js';
import type { ListQuery } from '../common/list/list-query.js';
import { Page } from '../common/list/page.js';
import { requireAffected } from '../common/writes/conditional-write.js';
import { toIso } from '../common/list/timestamps.js';
import { OAuthClient } from './oauth-client.entity.js';
import { OAuthGrant } from './oauth-grant.entity.js';
import type { OAuthGrantResponse } from './oauth-grant.response.js';
import { OAUTH_GRANTS_FIELDS } from './oauth-grants.resource.js';
import { OAuthRefreshToken } from './oauth-refresh-token.entity.js';
import { linkPrefix } from '../common/versioning/api-versions.js';

/**
 * The grants users gave OAuth clients and their revocation: revoking a grant denies the
 * access tokens of it still alive (their `jti`, until their `exp`, on the shared deny list) and
 * deletes it with its refresh tokens, so every token issued from it answers 401.
 */
@Injectable()
export class OAuthGrantsService {
  constructor(
    @InjectRepository(OAuthGrant) private readonly grants: Repository<OAuthGrant>,
    @InjectRepository(OAuthRefreshToken) private readonly tokens: Repository<OAuthRefreshToken>,
    @InjectRepository(OAuthClient) private readonly clients: Repository<OAuthClient>,
    private readonly denyList: TokenDenyList,
  ) {}

  /** One page of the caller's grants, with each client's `client_id` and name. */
  async list(query: ListQuery, caller: AuthUser): Promise<Page<OAuthGrantResponse>> {
    const page = await findPage({ repository: this.grants, where: 'g.user_id = :me', params: { me: caller.id } }, query, OAUTH_GRANTS_FIELDS, (row) => row);
    const ids = [...new Set(page.items.map((row) => Number(row.oauth_client_id)).filter((id) => id > 0))];
    const clients = new Map((ids.length ? await this.clients.findBy({ id: In(ids) }) : []).map((client) => [client.id, client]));
    return page.map((row) => toGrantResponse(row, clients.get(Number(row.oauth_client_id))));
  }

  /** One of the caller's grants. @throws 404 when it is not one of theirs. */
  async findOne(id: number, caller: AuthUser): Promise<OAuthGrantResponse> {
    const grant = await this.grants.findOne({ where: { id, user_id: caller.id } });
    if (!grant) throw notFound('oauth grant', id);
    const client = await this.clients.findOne({ where: { id: grant.oauth_client_id } });
    return toGrantResponse(grant as unknown as Record<string, unknown>, client ?? undefined);
  }

  /**
   * Revokes one of the caller's grants; of concurrent revocations exactly one succeeds (the
   * grant's DELETE reports whether it removed the row).
   * @throws 404 when it is not one of theirs, or was revoked meanwhile.
   */
  async remove(id: number, caller: AuthUser): Promise<void> {
    const grant = await this.grants.findOne({ where: { id, user_id: caller.id } });
    if (!grant) throw notFound('oauth grant', id);
    requireAffected({ affected: await this.revoke(grant.id) }, () => notFound('oauth grant', id));
  }

  /**
   * Revokes a grant: denies its live access tokens, deletes it and its refresh tokens. Idempotent;
   * returns how many grant rows this call deleted (0 when it was already gone).
   */
  async revoke(grantId: number): Promise<number> {
    const live = await this.tokens.find({
      where: { grant_id: grantId, access_expires_at: MoreThan(new Date()) },
      select: { access_jti: true, access_expires_at: true },
    });
    for (const token of live) await this.denyList.deny(token.access_jti, Math.ceil(token.access_expires_at.getTime() / 1000));
    return (await this.grants.delete({ id: grantId })).affected ?? 0;
  }

  /** Revokes every grant of a client (before the client is deleted). */
  async revokeAllOfClient(oauthClientId: number): Promise<void> {
    const grants = await this.grants.find({ where: { oauth_client_id: oauthClientId }, select: { id: true } });
    for (const grant of grants) await this.revoke(grant.id);
  }
}

function toGrantResponse(row: Record<string, unknown>, client: OAuthClient | undefined): OAuthGrantResponse {
  const id = Number(row.id);
  const prefix = linkPrefix();
  const out: Record<string, unknown> = {
    id,
    client_id: row.oauth_client_id === undefined ? undefined : (client?.client_id ?? ''),
    client_name: row.oauth_client_id === undefined ? undefined : (client?.name ?? ''),
    scopes: row.scopes === undefined ? undefined : String(row.scopes).split(' ').filter(Boolean),
    created_at: toIso(row.created_at),
    last_used_at: toIso(row.last_used_at),
    links: [{ rel: 'self', href: `${prefix}/oauth-grants/${id}` }],
  };
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  return out as unknown as OAuthGrantResponse;
}
