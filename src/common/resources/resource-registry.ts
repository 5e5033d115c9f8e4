import type { Type } from '@nestjs/common';
import type { ListSpec } from '../list/list-query.js';
import {
  type DocumentTag,
  describeScope,
  entitiesOf,
  type EntityClass,
  eventTypesOf,
  inOrder,
  type ResourceDeclaration,
  scopesOf,
  tagsOf,
  versionedSchemasOf,
} from './define-resource.js';

/** The injection token of the application's {@link ResourceRegistry} (provided by `ResourcesModule.forRoot`). */
export const RESOURCE_REGISTRY = Symbol('RESOURCE_REGISTRY');

/**
 * Orders the published documents fixed before the declarations were the source, each a list of
 * declaration names; a declaration not named comes after those named, in declaration order.
 */
export interface RegistryOrder {
  /** The order the modules are imported in: the order of their routes and of the documents' paths. */
  readonly modules?: readonly string[];
  /** The order the modules are loaded in, one after the other: their controllers register the documents' `…List` schemas as they load. */
  readonly loading?: readonly string[];
  /** The order of the event types (the `type` enums of the documents). */
  readonly events?: readonly string[];
}

/** A list derived from the registry that a decorator names before the registry exists (see {@link registeredList}). */
export type RegisteredList = 'scopes' | 'eventTypes';

const LISTS: readonly RegisteredList[] = ['scopes', 'eventTypes'];
const LIST_ITEM = /^\{registry:(\w+)\}$/;
const LIST_TEXT = /\{registry:(\w+)\|(.*?)\}/g;

/**
 * Stands for the registry's `list` in a decorator evaluated while the classes load (an
 * `@ApiProperty` enum or example, a field table's enum values): `values` first, then the list.
 * The document is completed with the list ({@link fillRegisteredLists}); the list grammar reads
 * it through {@link ResourceRegistry.listSpec}.
 */
export function registeredList(list: RegisteredList, ...values: string[]): string[] {
  return [...values, `{registry:${list}}`];
}

/** Stands for the length of `list` plus `extra` in a decorator's `maxItems` (see {@link registeredList}). */
export function registeredCount(list: RegisteredList, extra = 0): number {
  return -(1000 * (LISTS.indexOf(list) + 1) + extra);
}

/** Stands for `list` joined by `separator` in a decorator's text or pattern (see {@link registeredList}). */
export function registeredText(list: RegisteredList, separator: string): string {
  return `{registry:${list}|${separator}}`;
}

/**
 * The application's resources, as handed down by `ResourcesModule.forRoot`: the declarations
 * (src/resources.ts, or a test's) and everything derived from them — scopes, event types,
 * versioned schemas, tags, entities, modules.
 * @throws Error when two declarations share a name or an event type.
 */
export class ResourceRegistry {
  /** Every scope, in declaration order (docs/authentication.md#roles-and-scopes). */
  readonly scopes: readonly string[];
  /** Every event type, in the registry's event order (docs/events.md#event-types). */
  readonly eventTypes: readonly string[];
  /** The response schemas whose representations carry an `ETag`. */
  readonly versionedSchemas: ReadonlySet<string>;
  private readonly specs = new WeakMap<ListSpec, ListSpec>();

  constructor(
    readonly resources: readonly ResourceDeclaration[],
    private readonly order: RegistryOrder = {},
  ) {
    this.scopes = scopesOf(resources);
    this.eventTypes = eventTypesOf(resources, order.events);
    this.versionedSchemas = versionedSchemasOf(resources);
  }

  /** This registry with `resources` added after its own, in the same orders. */
  with(...resources: ResourceDeclaration[]): ResourceRegistry {
    return new ResourceRegistry([...this.resources, ...resources], this.order);
  }

  /** A derived list by name (see {@link registeredList}). */
  list(name: RegisteredList): readonly string[] {
    return name === 'scopes' ? this.scopes : this.eventTypes;
  }

  /** What `scope` lets its holder do, in words ("read todos"). */
  describeScope(scope: string): string {
    return describeScope(scope, this.resources);
  }

  /** The document's tags, one per declaration, in declaration order. */
  tags(): DocumentTag[] {
    return tagsOf(this.resources);
  }

  /** Every entity of the declarations, each once. */
  entities(): EntityClass[] {
    return entitiesOf(this.resources);
  }

  /**
   * Loads the declarations' modules one after the other, in the registry's loading order (so the
   * order their classes load in does not depend on when the files arrive); returns them in its
   * module order, each once (several declarations may name one module).
   */
  async loadModules(): Promise<Type[]> {
    const loaded = new Map<ResourceDeclaration, Type>();
    for (const resource of inOrder(this.resources, this.order.loading ?? [])) loaded.set(resource, await resource.module());
    return [...new Set(inOrder(this.resources, this.order.modules ?? []).map((resource) => loaded.get(resource)!))];
  }

  /** `spec` with every registered list in its enum filters' values replaced by the list (the same object when it has none); kept per spec. */
  listSpec(spec: ListSpec): ListSpec {
    let resolved = this.specs.get(spec);
    if (!resolved) {
      const filters = Object.entries(spec.filters);
      resolved = filters.some(([, filter]) => filter.values?.some((value) => LIST_ITEM.test(value)))
        ? {
            ...spec,
            filters: Object.fromEntries(
              filters.map(([name, filter]) => [name, filter.values ? { ...filter, values: this.expand(filter.values) as string[] } : filter]),
            ),
          }
        : spec;
      this.specs.set(spec, resolved);
    }
    return resolved;
  }

  /** `values` with each registered list in it ({@link registeredList}) replaced by the list's values. */
  expand<T>(values: readonly T[]): Array<T | string> {
    return values.flatMap((value): Array<T | string> => {
      const name = typeof value === 'string' ? LIST_ITEM.exec(value)?.[1] : undefined;
      return name && LISTS.includes(name as RegisteredList) ? [...this.list(name as RegisteredList)] : [value];
    });
  }
}

/**
 * Writes the registry's lists into a document where {@link registeredList},
 * {@link registeredCount} and {@link registeredText} stand for them, in place (keys keep their order).
 * @throws Error when a placeholder is left (a list name the registry does not know).
 */
export function fillRegisteredLists(document: object, registry: ResourceRegistry): void {
  const fill = (node: unknown): unknown => {
    if (typeof node === 'string')
      return node.replace(LIST_TEXT, (whole, name: string, separator: string) =>
        LISTS.includes(name as RegisteredList) ? registry.list(name as RegisteredList).join(separator) : whole,
      );
    if (Array.isArray(node)) return registry.expand(node).map(fill);
    if (!node || typeof node !== 'object') return node;
    const object = node as Record<string, unknown>;
    for (const [key, value] of Object.entries(object)) {
      if (key === 'maxItems' && typeof value === 'number' && value < 0) {
        const list = LISTS[Math.floor(-value / 1000) - 1];
        object[key] = list ? registry.list(list).length + (-value % 1000) : value;
      } else {
        object[key] = fill(value);
      }
    }
    return object;
  };
  fill(document);
  if (JSON.stringify(document).includes('{registry:')) throw new Error('the document names a list the resource registry does not have');
}
