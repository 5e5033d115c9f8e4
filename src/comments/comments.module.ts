import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ArticlesModule } from '../articles/articles.module.js';
import { UsersModule } from '../users/users.module.js';
import { CommentsV2Controller } from './comments-v2.controller.js';
import { CommentsController } from './comments.controller.js';
import { COMMENTS } from './comments.resource.js';
import { CommentsService } from './comments.service.js';

/**
 * Comments resource (docs/resources/comments.md), nested under articles; checks articles through ArticlesService.
 * One service, two shapes: v1 (deprecated, `author` an id) and v2 (`author` embedded).
 */
@Module({
  imports: [TypeOrmModule.forFeature([...COMMENTS.entities]), ArticlesModule, UsersModule],
  controllers: [CommentsController, CommentsV2Controller],
  providers: [CommentsService],
})
export class CommentsModule {}
