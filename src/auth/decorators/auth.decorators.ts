import { applyDecorators, createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiExtension } from '@nestjs/swagger';
import type { Role } from '../../users/user.entity.js';
import type { AuthUser } from '../auth-user.js';

export const IS_PUBLIC = 'resource-api:public';
export const REQUIRED_ROLES = 'resource-api:roles';

/**
 * Marks an operation as public (SPEC §3 list of public operations): the global auth guard lets it
 * through without a credential, and the OpenAPI document shows no security requirement for it.
 */
export const Public = () => applyDecorators(SetMetadata(IS_PUBLIC, true), ApiExtension('x-public', true));

/**
 * States that a controller's operations need a credential (every operation not marked
 * {@link Public}); documents the bearer scheme. The global guard enforces it either way.
 */
export const Authenticated = () => applyDecorators(ApiBearerAuth('bearer'));

/** Restricts an operation to callers having one of `roles` (403 otherwise); enforced by RolesGuard. */
export const Roles = (...roles: Role[]) => SetMetadata(REQUIRED_ROLES, roles);

/** Injects the authenticated caller ({@link AuthUser}) of a protected operation. */
export const CurrentUser = createParamDecorator((_: unknown, ctx: ExecutionContext): AuthUser => ctx.switchToHttp().getRequest().user);
