import { Module, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { bumpVersions } from '../common/writes/conditional-write.js';
import { TagsModule } from '../tags/tags.module.js';
import { UserLifecycle } from '../users/user-lifecycle.js';
import { UsersModule } from '../users/users.module.js';
import { Article } from './article.entity.js';
import { ArticlesV2Controller } from './articles-v2.controller.js';
import { ArticlesController } from './articles.controller.js';
import { ARTICLES } from './articles.resource.js';
import { ArticlesService } from './articles.service.js';

/**
 * Articles resource (docs/resources/articles.md): one service, two shapes — `/v1/articles` (deprecated, `author` an
 * id) and `/v2/articles` (`author` embedded). Exports ArticlesService, through which comments
 * check their article. Reacts to a user's rename (docs/extending.md#user-lifecycle-events).
 */
@Module({
  imports: [TypeOrmModule.forFeature([...ARTICLES.entities]), TagsModule, UsersModule],
  controllers: [ArticlesController, ArticlesV2Controller],
  providers: [ArticlesService],
  exports: [ArticlesService],
})
export class ArticlesModule implements OnModuleInit {
  constructor(private readonly lifecycle: UserLifecycle) {}

  /**
   * `user.renamed`: v2 articles embed their author's name, so the author's articles change with it —
   * their versions (entity tags) and `updated_at` move, in the rename's transaction.
   */
  onModuleInit(): void {
    this.lifecycle.on('user.renamed', 'articles', ({ manager, userId, at }) => bumpVersions(manager, Article, 'author_id = :id', { id: userId }, at));
  }
}
