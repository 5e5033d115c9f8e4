import { applyDecorators, createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiCookieAuth, ApiExtension, ApiResponse, ApiSecurity } from '@nestjs/swagger';
import type { AuthUser } from '../../common/caller/auth-user.js';
import { ErrorResp } from '../../common/errors/error-resp.js';
import type { Role } from '../../common/caller/roles.js';
import type { Scope, ScopeResource } from '../scopes.js';

export const REQUIRED_ROLES = 'resource-api:roles';
export const REQUIRED_SCOPE = 'resource-api:scope';
export const SCOPE_RESOURCE = 'resource-api:scope-resource';
/** OpenAPI extensions from which the document adds the `oauth2` requirement with the operation's scope (docs.ts). */
export const SCOPE_RESOURCE_EXTENSION = 'x-scope-resource';
export const REQUIRED_SCOPE_EXTENSION = 'x-required-scope';

/**
 * Documents the credentials a controller's (or an operation's) protected operations accept: the
 * three schemes as alternatives, bearer JWT, `X-API-Key`, the `sid` session cookie (docs/authentication.md#overview).
 * Documentation only: the global guard requires a credential on every operation not marked
 * `@Public()`, with or without this decorator. Scoped credentials (API keys, OAuth tokens) may
 * not call such operations unless they carry `@RequireScope(scope)`.
 */
export const ApiCredentials = () => applyDecorators(ApiBearerAuth('bearer'), ApiSecurity('api_key'), ApiCookieAuth('session'));

/**
 * Declares the scopes of a resource's controller and its documented security: each operation
 * needs `<resource>:read` (GET, HEAD) or `<resource>:write` (other methods) from a scoped
 * credential such as an API key or OAuth token (the ScopeGuard enforces it, {@link RequireScope}
 * overrides it per operation; the document shows it as the `oauth2` requirement), and the
 * credentials are documented as by {@link ApiCredentials}. `resource` is the name of a
 * declaration with `scopes: true` in src/resources.ts (any other name stops the start-up: ScopeGuard).
 */
export const ScopedResource = (resource: ScopeResource) =>
  applyDecorators(ApiCredentials(), SetMetadata(SCOPE_RESOURCE, resource), ApiExtension(SCOPE_RESOURCE_EXTENSION, resource));

/**
 * Declares the scope an operation needs from a scoped credential (API key, OAuth token); a
 * credential without it → 403 naming the scope. `null` means scoped credentials may not use the
 * operation at all (e.g. managing API keys).
 */
export const RequireScope = (scope: Scope | null) =>
  applyDecorators(SetMetadata(REQUIRED_SCOPE, scope), ApiExtension(REQUIRED_SCOPE_EXTENSION, scope ?? 'none'));

/** Metadata of {@link AllowedDuringTotpSetup}. */
export const ALLOWED_DURING_TOTP_SETUP = 'resource-api:totp-setup';

/**
 * Marks an operation a login limited to enrolling may call (REQUIRE_ADMIN_TOTP,
 * docs/authentication.md#requiring-two-factor-authentication-for-admins): enrolment, its
 * confirmation, the current session and signing out; AuthenticationGuard refuses every other with 403.
 */
export const AllowedDuringTotpSetup = () => SetMetadata(ALLOWED_DURING_TOTP_SETUP, true);

/** Restricts an operation to callers having one of `roles` (403 otherwise); enforced by RolesGuard. */
export const Roles = (...roles: Role[]) => SetMetadata(REQUIRED_ROLES, roles);

/** Injects the authenticated caller ({@link AuthUser}) of a protected operation. */
/**
 * The client a sign-in comes from (docs/authentication.md#your-logins): `req.ip` (TRUST_PROXY-aware)
 * and the `User-Agent` header. Not a documented parameter: every request may send a user agent.
 */
export const ClientOf = createParamDecorator((_: unknown, ctx: ExecutionContext): { address: string; userAgent?: string } => {
  const req = ctx.switchToHttp().getRequest<{ ip?: string; headers: Record<string, string | string[] | undefined> }>();
  const agent = req.headers['user-agent'];
  return { address: req.ip ?? '', userAgent: typeof agent === 'string' ? agent : undefined };
});

export const CurrentUser = createParamDecorator((_: unknown, ctx: ExecutionContext): AuthUser => ctx.switchToHttp().getRequest().user);

/**
 * Documents the 403 of a password sign-in refused by REQUIRE_VERIFIED_EMAIL
 * (docs/authentication.md#e-mail-verification): `forbidden`, after the password was found right.
 */
export const ApiEmailUnverified = () =>
  ApiResponse({
    status: 403,
    description:
      'REQUIRE_VERIFIED_EMAIL is on and the account has no verified e-mail address (the password was right): a new verification link is mailed to its address, if it has one.',
    type: ErrorResp,
    example: {
      error: 'e-mail address not verified: open the link mailed to the address of the account, then sign in again',
      code: 'forbidden',
      request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90',
    },
  });
