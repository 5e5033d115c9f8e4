import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Observable } from 'rxjs';

/** `Vary` of responses to authenticated requests: the credential and the negotiated version select the representation. */
const AUTHENTICATED_VARY = 'Authorization, Cookie, Accept';

/**
 * Caching of answers to authenticated requests (docs/wire.md#caching): `Cache-Control: private,
 * no-cache` unless the operation set its own (e.g. `no-store` where a secret is returned) and
 * `Vary: Authorization, Cookie, Accept` — a shared cache stores none of them, a browser revalidates.
 * Set before the handler runs, so errors carry them too.
 */
@Injectable()
export class PrivateCachingInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() === 'http') {
      const req = context.switchToHttp().getRequest<Request & { user?: unknown }>();
      if (req.user !== undefined) {
        const res = context.switchToHttp().getResponse<Response>();
        if (!res.hasHeader('Cache-Control')) res.setHeader('Cache-Control', 'private, no-cache');
        res.vary(AUTHENTICATED_VARY);
      }
    }
    return next.handle();
  }
}
