import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Tag } from './tag.entity.js';
import { TagsController } from './tags.controller.js';
import { TagsService } from './tags.service.js';

/** Tags resource (SPEC §6). Exports TagsService, through which articles resolve tag names. */
@Module({
  imports: [TypeOrmModule.forFeature([Tag])],
  controllers: [TagsController],
  providers: [TagsService],
  exports: [TagsService],
})
export class TagsModule {}
