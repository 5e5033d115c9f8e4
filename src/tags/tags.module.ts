import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TagsController } from './tags.controller.js';
import { TAGS } from './tags.resource.js';
import { TagsService } from './tags.service.js';

/** Tags resource (docs/resources/tags.md). Exports TagsService, through which articles resolve tag names. */
@Module({
  imports: [TypeOrmModule.forFeature([...TAGS.entities])],
  controllers: [TagsController],
  providers: [TagsService],
  exports: [TagsService],
})
export class TagsModule {}
