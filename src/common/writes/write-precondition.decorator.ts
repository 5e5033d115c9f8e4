import { createParamDecorator, type ExecutionContext, Injectable, Optional, type PipeTransform } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Request } from 'express';
import type { Env } from '../../config/env.validation.js';
import { parseEntityTags, type WritePreconditions } from './preconditions.js';

/** The request's `If-Match` field value(s), as received (undefined without the header). */
const ifMatchHeader = createParamDecorator((_: unknown, ctx: ExecutionContext): string | string[] | undefined => {
  return ctx.switchToHttp().getRequest<Request>().headers['if-match'];
});

/**
 * Turns a request's `If-Match` value into its {@link WritePreconditions}: the parsed entity tags
 * (`'*'`, the listed tags, or undefined) and whether a precondition is required (REQUIRE_IF_MATCH).
 * Never throws: the service's conditional write evaluates it (428/412, docs/writes.md#conditional-requests-etag-if-none-match-if-match).
 */
@Injectable()
export class WritePreconditionPipe implements PipeTransform<string | string[] | undefined, WritePreconditions> {
  private readonly required: boolean;

  constructor(@Optional() config?: ConfigService<Env, true>) {
    this.required = config?.get('REQUIRE_IF_MATCH', { infer: true }) === true;
  }

  transform(value: string | string[] | undefined): WritePreconditions {
    return { ifMatch: parseEntityTags(value), required: this.required };
  }
}

/**
 * Parameter decorator of a PUT, PATCH or DELETE handler of a resource: the request's write
 * precondition ({@link WritePreconditions}), which the handler passes to its service's one
 * conditional write (`versionCondition`, `updateVersioned`, `deleteVersioned`).
 */
export const WritePrecondition = (): ParameterDecorator => ifMatchHeader(undefined, WritePreconditionPipe);
