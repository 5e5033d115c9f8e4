import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { Strategy } from 'passport-custom';
import type { AuthUser } from '../../common/caller/auth-user.js';
import { SESSION_COOKIE, SessionsService } from '../sessions.service.js';

/** Session-cookie strategy (docs/authentication.md#session-cookies): the `sid` cookie names a live server-side session. */
@Injectable()
export class SessionStrategy extends PassportStrategy(Strategy, 'session') {
  constructor(private readonly sessions: SessionsService) {
    super();
  }

  /** Returns the session's user, or `false` (→ 401) for an unknown or ended session. */
  async validate(req: Request): Promise<AuthUser | false> {
    const sid = (req.cookies as Record<string, string> | undefined)?.[SESSION_COOKIE];
    return (sid && (await this.sessions.authenticate(sid))) || false;
  }
}
