import { Module, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ArticlesModule } from '../articles/articles.module.js';
import { bumpVersions } from '../common/writes/conditional-write.js';
import { UserLifecycle } from '../users/user-lifecycle.js';
import { UsersModule } from '../users/users.module.js';
import { Comment } from './comment.entity.js';
import { CommentsV2Controller } from './comments-v2.controller.js';
import { CommentsController } from './comments.controller.js';
import { COMMENTS } from './comments.resource.js';
import { CommentsService } from './comments.service.js';

/**
 * Comments resource (docs/resources/comments.md), nested under articles; checks articles through ArticlesService.
 * One service, two shapes: v1 (deprecated, `author` an id) and v2 (`author` embedded). Reacts to a
 * user's rename (docs/extending.md#user-lifecycle-events).
 */
@Module({
  imports: [TypeOrmModule.forFeature([...COMMENTS.entities]), ArticlesModule, UsersModule],
  controllers: [CommentsController, CommentsV2Controller],
  providers: [CommentsService],
})
export class CommentsModule implements OnModuleInit {
  constructor(private readonly lifecycle: UserLifecycle) {}

  /**
   * `user.renamed`: v2 comments embed their author's name, so the author's comments change with it —
   * their versions (entity tags) and `updated_at` move, in the rename's transaction (after the
   * articles': this module imports theirs, so it initialises later).
   */
  onModuleInit(): void {
    this.lifecycle.on('user.renamed', 'comments', ({ manager, userId, at }) => bumpVersions(manager, Comment, 'author_id = :id', { id: userId }, at));
  }
}
