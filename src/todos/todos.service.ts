import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { AuthUser } from '../auth/auth-user.js';
import { authorize } from '../common/access/access-policy.js';
import { findPage } from '../common/list/find-page.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { deleteVersioned, updateVersioned } from '../common/writes/conditional-write.js';
import { insertRow } from '../database/insert-row.js';
import type { CreateTodoDto, UpdateTodoDto } from './dto/create-todo.dto.js';
import { Todo } from './todo.entity.js';
import { toTodoResponse, type TodoResponse } from './todo.response.js';
import { TODOS_FIELDS } from './todos.resource.js';
import { TODOS_POLICY } from './todos.policy.js';

/** Todos (SPEC §6 todos): private to their owner; admins see and change all. */
@Injectable()
export class TodosService {
  constructor(@InjectRepository(Todo) private readonly todos: Repository<Todo>) {}

  /**
   * Creates a todo owned by the caller; `status` defaults to `pending`, `content` to null. The
   * response is the inserted row — every column is written here, only `id` comes back from the
   * INSERT — so it is not read back.
   */
  async create(dto: CreateTodoDto, caller: AuthUser): Promise<TodoResponse> {
    const now = new Date();
    const row = { title: dto.title, content: dto.content ?? null, status: dto.status ?? 'pending', owner_id: caller.id, created_at: now, updated_at: now, version: 1 };
    return toTodoResponse({ ...row, id: await insertRow(this.todos, row) });
  }

  /** One page of the caller's todos (all todos for an admin); filters apply within that. */
  list(query: ListQuery, caller: AuthUser): Promise<Page<TodoResponse>> {
    return findPage(this.todos.createQueryBuilder('t'), query, TODOS_FIELDS, toTodoResponse, TODOS_POLICY.visible(caller));
  }

  /**
   * Reads one todo.
   * @throws 404 when missing; 403 when another user's (and the caller is no admin).
   */
  async findOne(id: number, caller: AuthUser): Promise<TodoResponse> {
    return toTodoResponse(await this.load(id, caller, 'read'));
  }

  /** PUT: replaces the todo; omitted `content` → null, `status` → `pending` (SPEC §5). @throws 403, 404 */
  replace(id: number, dto: CreateTodoDto, caller: AuthUser): Promise<TodoResponse> {
    return this.apply(id, { title: dto.title, content: dto.content ?? null, status: dto.status ?? 'pending' }, caller);
  }

  /** PATCH: changes only the fields sent; `null` clears `content`. @throws 403, 404 */
  update(id: number, dto: UpdateTodoDto, caller: AuthUser): Promise<TodoResponse> {
    const patch: Partial<Todo> = {};
    if (dto.title !== undefined) patch.title = dto.title;
    if (dto.content !== undefined) patch.content = dto.content;
    if (dto.status !== undefined) patch.status = dto.status;
    return this.apply(id, patch, caller);
  }

  /**
   * Deletes a todo: the access check on the loaded row, then one conditional DELETE, so of
   * concurrent deletes exactly one succeeds. @throws 403; 404 when missing or deleted meanwhile
   */
  async remove(id: number, caller: AuthUser): Promise<void> {
    const current = await this.load(id, caller);
    await deleteVersioned(this.todos.manager, Todo, { id }, current.version, 'todo', id);
  }

  private async apply(id: number, patch: Partial<Todo>, caller: AuthUser): Promise<TodoResponse> {
    const current = await this.load(id, caller);
    const next = { ...current, ...patch, updated_at: new Date() };
    next.version = await updateVersioned(this.todos.manager, Todo, { id }, current.version, { ...patch, updated_at: next.updated_at }, 'todo', id);
    return toTodoResponse(next);
  }

  /** The todo `id` if the caller may `action` it ({@link TODOS_POLICY}). @throws 404, 403 */
  private async load(id: number, caller: AuthUser, action: 'read' | 'write' = 'write'): Promise<Todo> {
    return authorize(TODOS_POLICY, action, caller, await this.todos.findOne({ where: { id } }), id);
  }
}
