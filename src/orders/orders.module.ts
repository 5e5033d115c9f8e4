import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OrdersController } from './orders.controller.js';
import { ORDERS } from './orders.resource.js';
import { OrdersService } from './orders.service.js';

/** Orders resource (SPEC §6). */
@Module({
  imports: [TypeOrmModule.forFeature([...ORDERS.entities])],
  controllers: [OrdersController],
  providers: [OrdersService],
})
export class OrdersModule {}
