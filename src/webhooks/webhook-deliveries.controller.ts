import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/caller/auth-user.js';
import { CurrentUser, ScopedResource } from '../auth/decorators/auth.decorators.js';
import { ListOperation, ListParams, ReadOperation } from '../common/decorators/operation.decorators.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import { ApiPageResponse } from '../common/openapi/api-page-response.decorator.js';
import { ParseIdPipe } from '../common/pipes/parse-id.pipe.js';
import { CreateRedeliveryDto } from './dto/create-webhook.dto.js';
import { WebhookDeliveryResponse } from './webhook.response.js';
import { WEBHOOK_ID } from './webhooks.controller.js';
import { DELIVERIES_FIELDS } from './webhooks.resource.js';
import { WebhooksService } from './webhooks.service.js';

const DELIVERY_ID = ApiParam({ name: 'delivery_id', description: 'The delivery’s id.', schema: { type: 'integer', minimum: 1 }, example: 7 });

/**
 * `/v1/webhooks/{id}/deliveries` and `/v1/webhooks/{id}/redeliveries` (docs/webhooks.md#deliveries-and-redelivery): a webhook's
 * deliveries and redelivery of one delivery's event, for whoever may read (change) the webhook;
 * scoped credentials need `webhooks:read` (`webhooks:write`).
 */
@ApiTags('webhook-deliveries')
@ScopedResource('webhooks')
@Controller('webhooks/:id')
export class WebhookDeliveriesController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get('deliveries')
  @WEBHOOK_ID
  @ListOperation(DELIVERIES_FIELDS)
  @ApiOperation({ summary: 'List a webhook’s deliveries (status, attempts, last response, next attempt)' })
  @ApiPageResponse(WebhookDeliveryResponse, 'WebhookDeliveryList')
  @ApiErrors(400, 401, 403, 404)
  listDeliveries(
    @Param('id', ParseIdPipe) id: number,
    @ListParams() query: ListQuery,
    @CurrentUser() caller: AuthUser,
  ): Promise<Page<WebhookDeliveryResponse>> {
    return this.webhooks.listDeliveries(id, query, caller);
  }

  @Get('deliveries/:delivery_id')
  @WEBHOOK_ID
  @DELIVERY_ID
  @ReadOperation(DELIVERIES_FIELDS)
  @ApiOperation({ summary: 'Read one delivery of a webhook' })
  @ApiOkResponse({ type: WebhookDeliveryResponse })
  @ApiErrors(400, 401, 403, 404)
  findDelivery(
    @Param('id', ParseIdPipe) id: number,
    @Param('delivery_id', ParseIdPipe) deliveryId: number,
    @CurrentUser() caller: AuthUser,
  ): Promise<WebhookDeliveryResponse> {
    return this.webhooks.findDelivery(id, deliveryId, caller);
  }

  @Post('redeliveries')
  @WEBHOOK_ID
  @HttpCode(202)
  @ApiOperation({ summary: 'Ask for a redelivery of one delivery’s event (same webhook-id, a fresh attempt schedule)' })
  @ApiAcceptedResponse({ type: WebhookDeliveryResponse, description: 'The new delivery, pending: its first attempt starts at once.' })
  @ApiErrors(400, 401, 403, 404, 409, 413, 415, 422)
  redeliver(@Param('id', ParseIdPipe) id: number, @Body() body: CreateRedeliveryDto, @CurrentUser() caller: AuthUser): Promise<WebhookDeliveryResponse> {
    return this.webhooks.redeliver(id, body, caller);
  }
}
