import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { AuthUser } from '../common/caller/auth-user.js';
import { authorize } from '../common/access/access-policy.js';
import { findPage } from '../common/list/find-page.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { deleteVersioned, updateVersioned } from '../common/writes/conditional-write.js';
import { type Tagged, tagged, type WritePreconditions } from '../common/writes/preconditions.js';
import { inBothVersions } from '../events/event-data.js';
import { EventOutbox, type NewEvent } from '../events/event-outbox.js';
import type { EventType } from '../events/event-types.js';
import type { CreateTodoDto, UpdateTodoDto } from './dto/create-todo.dto.js';
import { Todo } from './todo.entity.js';
import { toTodoResponse, type TodoResponse } from './todo.response.js';
import { TODOS_FIELDS } from './todos.resource.js';
import { TODOS_POLICY } from './todos.policy.js';

/** The event of a todo write: owned by the todo's owner, `data` the todo in both versions' shapes. */
function todoEvent(type: EventType, todo: Todo): NewEvent {
  return { type, ownerId: todo.owner_id, resourceId: todo.id, data: inBothVersions(() => toTodoResponse(todo)) };
}

/**
 * Todos (docs/resources/todos.md): private to their owner; admins see and change all. Every write appends
 * its event (`todo.created`, `todo.updated`, `todo.deleted`) in the same transaction.
 */
@Injectable()
export class TodosService {
  constructor(
    @InjectRepository(Todo) private readonly todos: Repository<Todo>,
    private readonly outbox: EventOutbox,
  ) {}

  /**
   * Creates a todo owned by the caller; `status` defaults to `pending`, `content` to null. One
   * transaction of two INSERTs: the row and its `todo.created` event. The response is the inserted
   * row — every column is written here, only `id` comes back from the INSERT — so it is not read back.
   */
  async create(dto: CreateTodoDto, caller: AuthUser): Promise<Tagged<TodoResponse>> {
    const now = new Date();
    const row = {
      title: dto.title,
      content: dto.content ?? null,
      status: dto.status ?? 'pending',
      owner_id: caller.id,
      created_at: now,
      updated_at: now,
      version: 1,
    };
    const todo: Todo = { ...row, id: await this.outbox.insertWithEvent(this.todos, row, (id) => todoEvent('todo.created', { ...row, id })) };
    return tagged(toTodoResponse(todo), todo.version);
  }

  /** One page of the caller's todos (all todos for an admin); filters apply within that. */
  list(query: ListQuery, caller: AuthUser): Promise<Page<TodoResponse>> {
    return findPage(this.todos, query, TODOS_FIELDS, toTodoResponse, TODOS_POLICY.visible(caller));
  }

  /**
   * Reads one todo.
   * @throws 404 when missing; 403 when another user's (and the caller is no admin).
   */
  async findOne(id: number, caller: AuthUser): Promise<Tagged<TodoResponse>> {
    const todo = await this.load(id, caller, 'read');
    return tagged(toTodoResponse(todo), todo.version);
  }

  /** PUT: replaces the todo; omitted `content` → null, `status` → `pending` (docs/writes.md#put-replace). @throws 403, 404, 412/428 (`If-Match`) */
  replace(id: number, dto: CreateTodoDto, caller: AuthUser, preconditions?: WritePreconditions): Promise<Tagged<TodoResponse>> {
    return this.apply(id, { title: dto.title, content: dto.content ?? null, status: dto.status ?? 'pending' }, caller, preconditions);
  }

  /** PATCH: changes only the fields sent; `null` clears `content`. @throws 403, 404, 412/428 (`If-Match`) */
  update(id: number, dto: UpdateTodoDto, caller: AuthUser, preconditions?: WritePreconditions): Promise<Tagged<TodoResponse>> {
    const patch: Partial<Todo> = {};
    if (dto.title !== undefined) patch.title = dto.title;
    if (dto.content !== undefined) patch.content = dto.content;
    if (dto.status !== undefined) patch.status = dto.status;
    return this.apply(id, patch, caller, preconditions);
  }

  /**
   * Deletes a todo: the access check on the loaded row, then one conditional DELETE, so of
   * concurrent deletes exactly one succeeds; `todo.deleted` (the todo as it was) in the same
   * transaction. @throws 403; 404 when missing or deleted meanwhile; 412/428 (`If-Match`)
   */
  async remove(id: number, caller: AuthUser, preconditions?: WritePreconditions): Promise<void> {
    const current = await this.load(id, caller);
    await this.todos.manager.transaction(async (manager) => {
      await deleteVersioned(manager, Todo, { id }, current.version, preconditions, 'todo', id);
      await this.outbox.append(manager, todoEvent('todo.deleted', current));
    });
  }

  /** PUT and PATCH: one conditional UPDATE and `todo.updated` (the todo after it) in one transaction. */
  private async apply(id: number, patch: Partial<Todo>, caller: AuthUser, preconditions: WritePreconditions | undefined): Promise<Tagged<TodoResponse>> {
    const current = await this.load(id, caller);
    const next = { ...current, ...patch, updated_at: new Date() };
    await this.todos.manager.transaction(async (manager) => {
      next.version = await updateVersioned(manager, Todo, { id }, current.version, preconditions, { ...patch, updated_at: next.updated_at }, 'todo', id);
      await this.outbox.append(manager, todoEvent('todo.updated', next));
    });
    return tagged(toTodoResponse(next), next.version);
  }

  /** The todo `id` if the caller may `action` it ({@link TODOS_POLICY}). @throws 404, 403 */
  private async load(id: number, caller: AuthUser, action: 'read' | 'write' = 'write'): Promise<Todo> {
    return authorize(TODOS_POLICY, action, caller, await this.todos.findOne({ where: { id } }), id);
  }
}
