import type { DataSource } from 'typeorm';
import { Article, ArticleTag } from '../../src/articles/article.entity.js';
import { ArticlesService } from '../../src/articles/articles.service.js';
import type { AuthUser } from '../../src/common/caller/auth-user.js';
import { Comment } from '../../src/comments/comment.entity.js';
import { CommentsService } from '../../src/comments/comments.service.js';
import { EventOutbox } from '../../src/events/event-outbox.js';
import { OrdersService } from '../../src/orders/orders.service.js';
import { Tag } from '../../src/tags/tag.entity.js';
import { TagsService } from '../../src/tags/tags.service.js';
import { Todo } from '../../src/todos/todo.entity.js';
import { TodosService } from '../../src/todos/todos.service.js';
import { User } from '../../src/users/user.entity.js';
import type { Role } from '../../src/common/caller/roles.js';

/** The services of the service tier, wired as their modules wire them, on one DataSource. */
export interface Services {
  /** The outbox the services append to (register test listeners here). */
  outbox: EventOutbox;
  todos: TodosService;
  orders: OrdersService;
  tags: TagsService;
  articles: ArticlesService;
  comments: CommentsService;
}

/** Builds the services on `dataSource` (no Nest, no HTTP): each gets the repositories its module injects. */
export function servicesOn(dataSource: DataSource): Services {
  const outbox = new EventOutbox(dataSource);
  const tags = new TagsService(dataSource.getRepository(Tag));
  const articles = new ArticlesService(dataSource.getRepository(Article), dataSource.getRepository(ArticleTag), dataSource, tags, outbox);
  return {
    outbox,
    todos: new TodosService(dataSource.getRepository(Todo), outbox),
    orders: new OrdersService(dataSource, outbox),
    tags,
    articles,
    comments: new CommentsService(dataSource.getRepository(Comment), articles, outbox),
  };
}

let counter = 0;

/** Inserts a user with `role` and returns it as a caller (`{id, role}`), as the guards would put it on the request. */
export async function insertCaller(dataSource: DataSource, role: Role = 'user'): Promise<AuthUser> {
  counter += 1;
  const now = new Date();
  const result = await dataSource.getRepository(User).insert({
    username: `svc_${process.pid}_${counter}`,
    password_hash: 'not-a-hash: this user never logs in',
    name: `Service tier ${counter}`,
    age: null,
    email: null,
    role,
    created_at: now,
    updated_at: now,
  });
  return { id: Number(result.identifiers[0].id), role };
}
