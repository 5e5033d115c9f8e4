import { ownedPolicy } from '../common/access/access-policy.js';
import type { Todo } from './todo.entity.js';

/**
 * Who may do what to todos (docs/resources/todos.md#operations): private to their owner — the owner and admins read
 * and write, anyone else gets 403 `todo <id> belongs to another user`; a non-admin lists only
 * its own (the list query's alias is `t`).
 */
export const TODOS_POLICY = ownedPolicy<Pick<Todo, 'owner_id'>>({ resource: 'todo', ownerOf: (todo) => todo.owner_id, column: 't.owner_id' });
