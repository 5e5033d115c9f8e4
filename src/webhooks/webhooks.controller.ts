import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/caller/auth-user.js';
import { CurrentUser, ScopedResource } from '../auth/decorators/auth.decorators.js';
import { CreateOperation, ListOperation, ListParams, ReadOperation } from '../common/decorators/operation.decorators.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import { ApiPageResponse } from '../common/openapi/api-page-response.decorator.js';
import { ParseIdPipe } from '../common/pipes/parse-id.pipe.js';
import type { Tagged, WritePreconditions } from '../common/writes/preconditions.js';
import { WritePrecondition } from '../common/writes/write-precondition.decorator.js';
import { CreateWebhookDto, UpdateWebhookDto } from './dto/create-webhook.dto.js';
import { CreatedWebhookResponse, WebhookResponse } from './webhook.response.js';
import { WEBHOOKS_FIELDS } from './webhooks.resource.js';
import { WebhooksService } from './webhooks.service.js';

export const WEBHOOK_ID = ApiParam({ name: 'id', description: 'The webhook’s id.', schema: { type: 'integer', minimum: 1 }, example: 1 });

/**
 * `/v1/webhooks` and `/v2/webhooks` (docs/webhooks.md): signed webhook subscriptions to the events the
 * caller may see (its own; admins all) and secret rotations (deliveries: WebhookDeliveriesController).
 * The same shapes in both versions; a subscription's `api_version` chooses its payloads' shape.
 */
@ApiTags('webhooks')
@ScopedResource('webhooks')
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @CreateOperation()
  @ApiOperation({ summary: 'Subscribe a URL to events (the signing secret is in this response only)' })
  @ApiCreatedResponse({ type: CreatedWebhookResponse, description: 'The new webhook with its `secret`, shown this once; `Location` holds its path.' })
  @ApiErrors(400, 401, 403, 413, 415, 422)
  create(@Body() body: CreateWebhookDto, @CurrentUser() caller: AuthUser): Promise<Tagged<CreatedWebhookResponse>> {
    return this.webhooks.create(body, caller);
  }

  @Get()
  @ListOperation(WEBHOOKS_FIELDS)
  @ApiOperation({ summary: 'List webhooks (own; all for admins)' })
  @ApiPageResponse(WebhookResponse, 'WebhookList')
  @ApiErrors(400, 401, 403)
  list(@ListParams() query: ListQuery, @CurrentUser() caller: AuthUser): Promise<Page<WebhookResponse>> {
    return this.webhooks.list(query, caller);
  }

  @Get(':id')
  @WEBHOOK_ID
  @ReadOperation(WEBHOOKS_FIELDS)
  @ApiOperation({ summary: 'Read a webhook (never its secret)' })
  @ApiOkResponse({ type: WebhookResponse })
  @ApiErrors(400, 401, 403, 404)
  findOne(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser): Promise<Tagged<WebhookResponse>> {
    return this.webhooks.findOne(id, caller);
  }

  @Patch(':id')
  @WEBHOOK_ID
  @ApiOperation({ summary: 'Update a webhook: url, events, description, api_version, enabled' })
  @ApiOkResponse({ type: WebhookResponse })
  @ApiErrors(400, 401, 403, 404, 412, 413, 415, 422, 428)
  update(
    @Param('id', ParseIdPipe) id: number,
    @Body() body: UpdateWebhookDto,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<WebhookResponse>> {
    return this.webhooks.update(id, body, caller, preconditions);
  }

  @Delete(':id')
  @WEBHOOK_ID
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a webhook and its deliveries' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors(400, 401, 403, 404, 412, 428)
  async remove(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser, @WritePrecondition() preconditions: WritePreconditions): Promise<void> {
    await this.webhooks.remove(id, caller, preconditions);
  }

  @Post(':id/secret-rotations')
  @WEBHOOK_ID
  @CreateOperation()
  @ApiOperation({ summary: 'Rotate the signing secret (the previous one keeps signing for WEBHOOK_SECRET_GRACE_SECONDS)' })
  @ApiCreatedResponse({ type: CreatedWebhookResponse, description: 'The webhook with its new `secret`, shown this once; `Location` holds the webhook’s path.' })
  @ApiErrors(400, 401, 403, 404, 409, 412, 428)
  rotateSecret(
    @Param('id', ParseIdPipe) id: number,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<CreatedWebhookResponse>> {
    return this.webhooks.rotateSecret(id, caller, preconditions);
  }
}
