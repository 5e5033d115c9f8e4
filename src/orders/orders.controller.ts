import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/caller/auth-user.js';
import { CurrentUser, ScopedResource } from '../auth/decorators/auth.decorators.js';
import { CreateOperation, ListOperation, ListParams, ReadOperation } from '../common/decorators/operation.decorators.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { Idempotent } from '../common/decorators/idempotent.decorator.js';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import { ApiPageResponse } from '../common/openapi/api-page-response.decorator.js';
import { ParseIdPipe } from '../common/pipes/parse-id.pipe.js';
import type { Tagged, WritePreconditions } from '../common/writes/preconditions.js';
import { WritePrecondition } from '../common/writes/write-precondition.decorator.js';
import { CreateOrderDto, ReplaceOrderDto, UpdateOrderDto } from './dto/create-order.dto.js';
import { OrderResponse } from './order.response.js';
import { ORDERS_FIELDS } from './orders.resource.js';
import { OrdersService } from './orders.service.js';

const TRANSITIONS_TEXT =
  'Status moves: pending→paid, pending→cancelled, paid→cancelled (the order’s user or an admin); paid→shipped, shipped→delivered (admins only, else 403). ' +
  'Any other move → 409, including a PATCH to the current status (on PUT, the whole order, the current status means "keep"). Items and currency can change only while the order is pending (else 409). ' +
  'Status changes are conditional writes: of concurrent moves from one status exactly one succeeds, the others get 409 naming the status they met.';

/** `/v1/orders` (docs/resources/orders.md): private to their user, admins see and act on all. Money in cents. */
@ApiTags('orders')
@ScopedResource('orders')
@Controller('orders')
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  @Post()
  @CreateOperation()
  @ApiOperation({
    summary: 'Create an order',
    description: 'Starts `pending`; `total_cents` = Σ quantity × unit_price_cents. `user` and `total_cents` are ignored when sent.',
  })
  @ApiCreatedResponse({ type: OrderResponse, description: 'The new order; `Location` holds its path.' })
  @ApiErrors(400, 401, 413, 415, 422)
  create(@Body() body: CreateOrderDto, @CurrentUser() caller: AuthUser): Promise<Tagged<OrderResponse>> {
    return this.orders.create(body, caller);
  }

  @Get()
  @ListOperation(ORDERS_FIELDS)
  @ApiOperation({ summary: 'List orders (own; all for admins)' })
  @ApiPageResponse(OrderResponse, 'OrderList')
  @ApiErrors(400, 401)
  list(@ListParams() query: ListQuery, @CurrentUser() caller: AuthUser): Promise<Page<OrderResponse>> {
    return this.orders.list(query, caller);
  }

  @Get(':id')
  @ReadOperation(ORDERS_FIELDS)
  @ApiOperation({ summary: 'Read an order' })
  @ApiOkResponse({ type: OrderResponse })
  @ApiErrors(400, 401, 403, 404)
  findOne(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser): Promise<Tagged<OrderResponse>> {
    return this.orders.findOne(id, caller);
  }

  @Put(':id')
  @ApiOperation({ summary: 'Replace an order (omitted status → pending)', description: TRANSITIONS_TEXT })
  @ApiOkResponse({ type: OrderResponse })
  @ApiErrors(400, 401, 403, 404, 409, 413, 415, 422)
  replace(
    @Param('id', ParseIdPipe) id: number,
    @Body() body: ReplaceOrderDto,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<OrderResponse>> {
    return this.orders.replace(id, body, caller, preconditions);
  }

  @Patch(':id')
  @Idempotent()
  @ApiOperation({ summary: 'Update an order, e.g. {"status": "paid"}', description: TRANSITIONS_TEXT })
  @ApiOkResponse({ type: OrderResponse })
  @ApiErrors(400, 401, 403, 404, 409, 413, 415, 422)
  update(
    @Param('id', ParseIdPipe) id: number,
    @Body() body: UpdateOrderDto,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<OrderResponse>> {
    return this.orders.update(id, body, caller, preconditions);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete an order (only while pending or cancelled, else 409)' })
  @ApiNoContentResponse({ description: 'Deleted, with its items.' })
  @ApiErrors(400, 401, 403, 404, 409)
  async remove(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser, @WritePrecondition() preconditions: WritePreconditions): Promise<void> {
    await this.orders.remove(id, caller, preconditions);
  }
}
