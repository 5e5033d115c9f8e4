import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TagsModule } from '../tags/tags.module.js';
import { Article, ArticleTag } from './article.entity.js';
import { ArticlesController } from './articles.controller.js';
import { ArticlesService } from './articles.service.js';

/** Articles resource (SPEC §6). Exports ArticlesService, through which comments check their article. */
@Module({
  imports: [TypeOrmModule.forFeature([Article, ArticleTag]), TagsModule],
  controllers: [ArticlesController],
  providers: [ArticlesService],
  exports: [ArticlesService],
})
export class ArticlesModule {}
