import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TagsModule } from '../tags/tags.module.js';
import { UsersModule } from '../users/users.module.js';
import { ArticlesV2Controller } from './articles-v2.controller.js';
import { ArticlesController } from './articles.controller.js';
import { ARTICLES } from './articles.resource.js';
import { ArticlesService } from './articles.service.js';

/**
 * Articles resource (docs/resources/articles.md): one service, two shapes — `/v1/articles` (deprecated, `author` an
 * id) and `/v2/articles` (`author` embedded). Exports ArticlesService, through which comments
 * check their article.
 */
@Module({
  imports: [TypeOrmModule.forFeature([...ARTICLES.entities]), TagsModule, UsersModule],
  controllers: [ArticlesController, ArticlesV2Controller],
  providers: [ArticlesService],
  exports: [ArticlesService],
})
export class ArticlesModule {}
