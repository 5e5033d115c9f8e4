import type { DataSource } from 'typeorm';
import type { AuthUser } from '../../src/common/caller/auth-user.js';
import type { ServiceTier } from '../../src/common/resources/define-resource.js';
import { EventOutbox } from '../../src/events/event-outbox.js';
import { RESOURCES } from '../../src/resources.js';
import { User } from '../../src/users/user.entity.js';
import type { Role } from '../../src/common/caller/roles.js';

/** The declarations (src/resources.ts) with a service-tier hook (`serviceTier`). */
type Tiered = Extract<(typeof RESOURCES)[number], { readonly serviceTier: (tier: ServiceTier) => unknown }>;

/**
 * The services of the service tier, by declaration name — one per declaration with a
 * `serviceTier` hook, wired as their modules wire them, on one DataSource — and the outbox they
 * append to (register test listeners there).
 */
export type Services = { outbox: EventOutbox } & { [D in Tiered as D['name']]: ReturnType<D['serviceTier']> };

/** Builds the services on `dataSource` (no Nest, no HTTP): each declaration's hook, given the repositories and the other services it needs. */
export function servicesOn(dataSource: DataSource): Services {
  const outbox = new EventOutbox(dataSource);
  const built = new Map<string, unknown>();
  const tier: ServiceTier = {
    dataSource,
    outbox,
    service<T>(name: string): T {
      if (!built.has(name)) {
        const declaration = RESOURCES.find((resource) => resource.name === name);
        if (!declaration || !('serviceTier' in declaration)) throw new Error(`resource ${name} has no service-tier hook`);
        built.set(name, declaration.serviceTier(tier));
      }
      return built.get(name) as T;
    },
  };
  for (const resource of RESOURCES) if ('serviceTier' in resource) tier.service(resource.name);
  return { outbox, ...Object.fromEntries(built) } as Services;
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
