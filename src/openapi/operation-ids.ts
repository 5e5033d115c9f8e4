/** `webhook-deliveries` → `WebhookDeliveries` (`oauth` written `OAuth`). */
function pascal(noun: string): string {
  return noun
    .split('-')
    .map((word) => (word === 'oauth' ? 'OAuth' : word.charAt(0).toUpperCase() + word.slice(1)))
    .join('');
}

/** The singular of a collection name: `webhook-deliveries` → `webhook-delivery`, `todos` → `todo`. */
function singular(noun: string): string {
  return noun.endsWith('ies') ? `${noun.slice(0, -3)}y` : noun.replace(/s$/, '');
}

/**
 * The operation id a client generator turns into a method name (README.md#api-documentation-and-clients),
 * derived from the operation's kind and its resource declaration: `listTodos`, `createTodo`,
 * `getTodo`, `replaceTodo` (PUT), `updateTodo` (PATCH), `deleteTodo` — a GET or POST of a
 * collection, a GET, PUT, PATCH or DELETE of a member (`/…/{id}`). The noun is the declaration's
 * name (`tag`, e.g. `webhook-deliveries` for `/webhooks/{id}/deliveries`); a collection that is no
 * declaration of its own is named after the member it hangs from (`/webhooks/{id}/secret-rotations`
 * → `createWebhookSecretRotation`). Takes the method (lower case), the path (`/v2/todos/{id}`; the
 * version prefix is ignored, so both documents give the same id) and the tag; returns undefined for
 * a path of another shape (an action such as `/sessions/current`: the operation names itself).
 */
export function derivedOperationId(method: string, path: string, tag: string | undefined): string | undefined {
  const segments = path
    .replace(/^\/v\d+(?=\/)/, '')
    .split('/')
    .filter((segment) => segment !== '');
  const member = segments.length > 0 && /^\{.+\}$/.test(segments[segments.length - 1]);
  const collection = segments[segments.length - (member ? 2 : 1)];
  if (!tag || !collection || /[{}]/.test(collection)) return undefined;
  // the segments before the collection alternate collection, {id}: a nested collection hangs from the member before it
  const parent = segments.length - (member ? 2 : 1) >= 2 ? segments[segments.length - (member ? 4 : 3)] : undefined;
  const noun = tag.endsWith(collection) ? tag : parent ? `${singular(parent)}-${collection}` : undefined;
  if (!noun) return undefined;
  const kinds: Record<string, string | undefined> = member
    ? { get: 'get', put: 'replace', patch: 'update', delete: 'delete' }
    : { get: 'list', post: 'create' };
  const kind = kinds[method];
  if (!kind) return undefined;
  return `${kind}${pascal(kind === 'list' ? noun : singular(noun))}`;
}
