import { randomBytes, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { JwtService } from '@nestjs/jwt';
import { InjectRepository } from '@nestjs/typeorm';
import OAuth2Server from '@node-oauth/oauth2-server';
import { IsNull, LessThan, Repository } from 'typeorm';
import { issuedAtClaims } from '../auth/deny-list.js';
import { sha256 } from '../auth/hashing.js';
import { JwtKeys } from '../auth/jwt-keys.js';
import { RESOURCE_REGISTRY, type ResourceRegistry } from '../common/resources/resource-registry.js';
import type { Env } from '../config/env.validation.js';
import { SharedStore } from '../store/shared-store.js';
import { UsersService } from '../users/users.service.js';
import { OAuthAuthorizationCode } from './oauth-authorization-code.entity.js';
import { OAuthClient } from './oauth-client.entity.js';
import { OAuthClientsService } from './oauth-clients.service.js';
import { OAuthGrant } from './oauth-grant.entity.js';
import { OAuthGrantsService } from './oauth-grants.service.js';
import { OAuthRefreshToken } from './oauth-refresh-token.entity.js';

/** Grant types every client may use: no implicit, password or client-credentials grant (RFC 9700 §2.1.2, §2.4). */
export const GRANT_TYPES = ['authorization_code', 'refresh_token'];

/** The client as the library sees it: `id` is the public `client_id`. */
export interface ModelClient extends OAuth2Server.Client {
  id: string;
  pk: number;
  name: string;
  grants: string[];
  redirectUris: string[];
  scopes: string[];
  confidential: boolean;
}

/** The user as the library carries it between model calls; `familyId`/`grantId` tie tokens to their grant. */
export interface ModelUser extends OAuth2Server.User {
  id: number;
  role: string;
  username?: string;
  /** Set while exchanging a code: the code's row, to link the new grant to it. */
  codeId?: number;
  /** The grant's token family (`fid` claim); created with the first access token of a code exchange. */
  familyId?: string;
  grantId?: number;
  /** When the user's id and role were read (epoch ms, before the read): the access token's `iat_ms`. */
  readAtMs?: number;
}

type Model = OAuth2Server.AuthorizationCodeModel & OAuth2Server.RefreshTokenModel;

/**
 * The @node-oauth/oauth2-server model backed by TypeORM. The library runs the protocol
 * (RFC 6749 §4.1 and §6, RFC 7636 PKCE); this stores and checks:
 * - codes as SHA-256, single use (`used_at`, claimed atomically); a second use revokes the grant
 *   issued from the code (RFC 6749 §4.1.2);
 * - access tokens are the service's JWTs with `client_id`, `scope`, `fid` (the grant's family) and
 *   `jti` claims, so the existing guard accepts them and ScopeGuard limits them;
 * - refresh tokens as SHA-256, rotated on every use; presenting a rotated one revokes the whole
 *   grant (RFC 9700 §4.14.2 reuse detection);
 * - scopes never wider than the client's registered scopes.
 * {@link forAuthorize} and {@link forToken} differ only in client authentication.
 */
@Injectable()
export class OAuthModel {
  private readonly accessTtl: number;

  constructor(
    @InjectRepository(OAuthAuthorizationCode) private readonly codes: Repository<OAuthAuthorizationCode>,
    @InjectRepository(OAuthGrant) private readonly grantRows: Repository<OAuthGrant>,
    @InjectRepository(OAuthRefreshToken) private readonly tokens: Repository<OAuthRefreshToken>,
    private readonly clients: OAuthClientsService,
    private readonly grants: OAuthGrantsService,
    private readonly users: UsersService,
    private readonly jwt: JwtService,
    private readonly keys: JwtKeys,
    private readonly store: SharedStore,
    config: ConfigService<Env, true>,
    @Inject(RESOURCE_REGISTRY) private readonly registry: ResourceRegistry,
  ) {
    this.accessTtl = config.get('ACCESS_TOKEN_TTL', { infer: true });
  }

  /** The model for the authorize step: the client is looked up by `client_id` alone (RFC 6749 §4.1.1). */
  forAuthorize(): Model {
    return this.model(async (clientId) => toModelClient(await this.clients.findByClientId(clientId)));
  }

  /** The model for the token endpoint: confidential clients must authenticate with their secret, public ones must not send one. */
  forToken(): Model {
    return this.model(async (clientId, secret) => toModelClient(await this.clients.authenticate(clientId, secret)));
  }

  private model(getClient: (clientId: string, secret: string | null | undefined) => Promise<ModelClient | null>): Model {
    return {
      getClient,
      validateScope: (_user, client, scope) => this.validateScope(client as ModelClient, scope),
      validateRedirectUri: async (uri, client) => (client as ModelClient).redirectUris.includes(uri),
      generateAuthorizationCode: async () => randomBytes(32).toString('base64url'),
      saveAuthorizationCode: (code, client, user) => this.saveAuthorizationCode(code, client as ModelClient, user as ModelUser),
      getAuthorizationCode: (code) => this.getAuthorizationCode(code),
      revokeAuthorizationCode: (code) => this.revokeAuthorizationCode(code),
      generateAccessToken: (client, user, scope) => this.generateAccessToken(client as ModelClient, user as ModelUser, scope),
      generateRefreshToken: async () => randomBytes(32).toString('base64url'),
      saveToken: (token, client, user) => this.saveToken(token, client as ModelClient, user as ModelUser),
      getRefreshToken: (token) => this.getRefreshToken(token),
      revokeToken: (token) => this.revokeRefreshToken(token),
      // the library's bearer authentication is not used: the service's guard verifies access tokens
      getAccessToken: async () => false,
    };
  }

  /** The requested scopes when every one is known and registered for the client; false (→ `invalid_scope`) otherwise or when none. */
  async validateScope(client: ModelClient, scope: string[] | undefined): Promise<string[] | false> {
    const requested = [...new Set(scope ?? [])];
    if (requested.length === 0) return false;
    return requested.every((s) => this.registry.scopes.includes(s) && client.scopes.includes(s)) ? requested.sort() : false;
  }

  private async saveAuthorizationCode(
    code: Pick<OAuth2Server.AuthorizationCode, 'authorizationCode' | 'expiresAt' | 'redirectUri' | 'scope' | 'codeChallenge' | 'codeChallengeMethod'>,
    client: ModelClient,
    user: ModelUser,
  ): Promise<OAuth2Server.AuthorizationCode> {
    // PKCE is mandatory with S256 (RFC 9700 §2.1.1); the authorize step checked it, this is the last line
    if (!code.codeChallenge || code.codeChallengeMethod !== 'S256') throw new OAuth2Server.InvalidRequestError('Invalid request: PKCE with S256 is required');
    const now = new Date();
    // used codes are kept until they expire, for reuse detection; older ones are swept here
    await this.codes.delete({ expires_at: LessThan(new Date(now.getTime() - 3_600_000)) });
    await this.codes.insert({
      code_hash: sha256(code.authorizationCode),
      oauth_client_id: client.pk,
      user_id: user.id,
      redirect_uri: code.redirectUri,
      scopes: (code.scope ?? []).join(' '),
      code_challenge: code.codeChallenge,
      code_challenge_method: code.codeChallengeMethod,
      expires_at: code.expiresAt,
      used_at: null,
      grant_id: null,
      created_at: now,
    });
    return { ...code, client, user };
  }

  private async getAuthorizationCode(code: string): Promise<OAuth2Server.AuthorizationCode | null> {
    const row = await this.codes.findOne({ where: { code_hash: sha256(code) } });
    if (!row) return null;
    if (row.used_at) {
      // second use (RFC 6749 §4.1.2): refuse, and revoke the tokens issued from the code
      await this.codeReused(row.id);
      return null;
    }
    const readAtMs = Date.now();
    const [client, user] = await Promise.all([this.clientByPk(row.oauth_client_id), this.users.findCredentialsById(row.user_id)]);
    if (!client || !user) return null;
    return {
      authorizationCode: code,
      expiresAt: row.expires_at,
      redirectUri: row.redirect_uri,
      scope: row.scopes.split(' ').filter(Boolean),
      client,
      user: { id: user.id, role: user.role, codeId: row.id, readAtMs } satisfies ModelUser,
      codeChallenge: row.code_challenge,
      codeChallengeMethod: row.code_challenge_method,
    };
  }

  /** Claims the code atomically: only the first exchange gets `true`. */
  private async revokeAuthorizationCode(code: OAuth2Server.AuthorizationCode): Promise<boolean> {
    const codeId = (code.user as ModelUser).codeId as number;
    const claimed = await this.codes.update({ id: codeId, used_at: IsNull() }, { used_at: new Date() });
    if (claimed.affected === 1) return true;
    // lost the race against a concurrent exchange of the same code: a second use all the same
    await this.codeReused(codeId);
    return false;
  }

  /**
   * A code came back after its first use (RFC 6749 §4.1.2, RFC 9700 §4.5): the tokens issued from
   * it are revoked. The first exchange may still be issuing them, so the reuse is first marked in
   * the shared store (checked by {@link saveToken} once its tokens exist), then the grant, if it
   * is recorded on the code already, is revoked. Either this sees the grant or the first exchange
   * sees the mark: the grant is recorded on the code only after its tokens are stored.
   */
  private async codeReused(codeId: number): Promise<void> {
    await this.store.set(reusedCodeKey(codeId), '1', CODE_REUSE_MARK_MS);
    const row = await this.codes.findOne({ where: { id: codeId }, select: { id: true, grant_id: true } });
    if (row?.grant_id) await this.grants.revoke(row.grant_id);
  }

  /** Signs the service's access JWT (the claims of docs/authentication.md#the-access-token plus `client_id` and `scope`), lifetime ACCESS_TOKEN_TTL. */
  private async generateAccessToken(client: ModelClient, user: ModelUser, scope: string[] | undefined): Promise<string> {
    user.familyId ??= randomUUID();
    return this.jwt.signAsync(
      {
        user_id: user.id,
        role: user.role,
        typ: 'access',
        fid: user.familyId,
        client_id: client.id,
        scope: (scope ?? []).join(' '),
        ...issuedAtClaims(user.readAtMs ?? Date.now()),
      },
      {
        ...this.keys.signOptions,
        expiresIn: this.accessTtl,
        jwtid: randomUUID(),
      },
    );
  }

  private async saveToken(token: OAuth2Server.Token, client: ModelClient, user: ModelUser): Promise<OAuth2Server.Token> {
    const now = new Date();
    let grantId = user.grantId;
    if (token.authorizationCode) {
      const inserted = await this.grantRows.insert({
        user_id: user.id,
        oauth_client_id: client.pk,
        scopes: (token.scope ?? []).join(' '),
        family_id: user.familyId ?? randomUUID(),
        created_at: now,
        last_used_at: now,
      });
      grantId = Number(inserted.identifiers[0].id);
    } else {
      await this.grantRows.update({ id: grantId }, { last_used_at: now });
    }
    const { jti } = this.jwt.decode<{ jti: string }>(token.accessToken);
    await this.tokens.insert({
      grant_id: grantId,
      token_hash: sha256(token.refreshToken as string),
      scopes: (token.scope ?? []).join(' '),
      access_jti: jti,
      access_expires_at: token.accessTokenExpiresAt as Date,
      expires_at: token.refreshTokenExpiresAt as Date,
      rotated_at: null,
      created_at: now,
    });
    if (token.authorizationCode) {
      // recorded on the code only now that its tokens exist, then the reuse mark is read (codeReused)
      await this.codes.update({ id: user.codeId }, { grant_id: grantId });
      if ((await this.store.get(reusedCodeKey(user.codeId as number))) !== null) await this.grants.revoke(grantId as number);
    }
    return { ...token, client, user };
  }

  private async getRefreshToken(refreshToken: string): Promise<OAuth2Server.RefreshToken | null> {
    const row = await this.tokens.findOne({ where: { token_hash: sha256(refreshToken) } });
    if (!row) return null;
    if (row.rotated_at) {
      // a rotated refresh token came back: someone holds a copy (RFC 9700 §4.14.2) → revoke the grant
      await this.grants.revoke(row.grant_id);
      return null;
    }
    const grant = await this.grantRows.findOne({ where: { id: row.grant_id } });
    if (!grant) return null;
    const readAtMs = Date.now();
    const [client, user] = await Promise.all([this.clientByPk(grant.oauth_client_id), this.users.findCredentialsById(grant.user_id)]);
    if (!client || !user) return null;
    return {
      refreshToken,
      refreshTokenExpiresAt: row.expires_at,
      scope: row.scopes.split(' ').filter(Boolean),
      client,
      user: { id: user.id, role: user.role, familyId: grant.family_id, grantId: grant.id, readAtMs } satisfies ModelUser,
      rowId: row.id,
    };
  }

  /** Rotation: retires the presented refresh token atomically; losing the race counts as reuse. */
  private async revokeRefreshToken(token: OAuth2Server.RefreshToken): Promise<boolean> {
    const claimed = await this.tokens.update({ id: token.rowId as number, rotated_at: IsNull() }, { rotated_at: new Date() });
    if (claimed.affected === 1) return true;
    const grantId = (token.user as ModelUser).grantId;
    if (grantId) await this.grants.revoke(grantId);
    return false;
  }

  private async clientByPk(pk: number): Promise<ModelClient | null> {
    return toModelClient(await this.clients.findByPk(pk));
  }
}

/** Maps a client row to what the library expects. */
export function toModelClient(row: OAuthClient | null): ModelClient | null {
  if (!row) return null;
  return {
    id: row.client_id,
    pk: row.id,
    name: row.name,
    grants: GRANT_TYPES,
    redirectUris: row.redirect_uris.split(' ').filter(Boolean),
    scopes: row.scopes.split(' ').filter(Boolean),
    confidential: Boolean(row.confidential),
  };
}

/** How long (ms) the mark of a reused code is kept: far longer than any exchange takes. */
const CODE_REUSE_MARK_MS = 10 * 60 * 1000;

/** The shared-store key marking that authorization code `codeId` was presented more than once. */
const reusedCodeKey = (codeId: number) => `oauth-code-reused:${codeId}`;
