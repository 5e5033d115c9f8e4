import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';

/** Metadata key of {@link Public}, read by the authentication guard. */
export const IS_PUBLIC = 'resource-api:public';

/**
 * Marks an operation as public (docs/authentication.md#overview, "Public operations"): the global
 * auth guard lets it through without a credential, and the OpenAPI document shows no security
 * requirement for it. Here, below `auth/`, so that every module declaring a public operation
 * (health, metrics, auth, users, oauth) imports it downward.
 */
export const Public = () => applyDecorators(SetMetadata(IS_PUBLIC, true), ApiExtension('x-public', true));
