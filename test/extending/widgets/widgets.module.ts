import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Widget } from './widget.entity.js';
import { WidgetsController } from './widgets.controller.js';
import { WidgetsService } from './widgets.service.js';

/** The widgets resource (test/extending.e2e-spec.ts). */
@Module({
  imports: [TypeOrmModule.forFeature([Widget])],
  controllers: [WidgetsController],
  providers: [WidgetsService],
})
export class WidgetsModule {}
