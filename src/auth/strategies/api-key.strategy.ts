import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { HeaderAPIKeyStrategy } from 'passport-headerapikey';
import { ApiKeysService } from '../api-keys.service.js';
import type { AuthUser } from '../../common/caller/auth-user.js';

/** passport-headerapikey strategy for `X-API-Key: <key>` (docs/authentication.md#api-keys); never reads the URL. */
@Injectable()
export class ApiKeyStrategy extends PassportStrategy(HeaderAPIKeyStrategy, 'api-key') {
  constructor(private readonly apiKeys: ApiKeysService) {
    super({ header: 'X-API-Key', prefix: '' }, false);
  }

  /** Returns the key's user limited to its scopes, or `false` (→ 401) for an unknown, expired or revoked key. */
  async validate(apiKey: string): Promise<AuthUser | false> {
    return (await this.apiKeys.authenticate(apiKey)) ?? false;
  }
}
