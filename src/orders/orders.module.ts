import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OrdersController } from './orders.controller.js';
import { ORDERS } from './orders.resource.js';
import { OrdersService } from './orders.service.js';

/** Orders resource (docs/resources/orders.md). */
@Module({
  imports: [TypeOrmModule.forFeature([...ORDERS.entities])],
  controllers: [OrdersController],
  providers: [OrdersService],
})
export class OrdersModule {}
