import { type DynamicModule, Global, Inject, Module, type OnModuleInit } from '@nestjs/common';
import { bindRegistryValidation } from './registered-values.js';
import { RESOURCE_REGISTRY, ResourceRegistry } from './resource-registry.js';

/**
 * Hands the application's resources down: `ResourcesModule.forRoot(registry)` provides
 * {@link RESOURCE_REGISTRY} to every module (global), for what is derived from the declarations
 * at run time — the DataSource's entities and migrations, the scopes, the event types, the
 * documents — instead of each place importing `src/resources.ts`. On initialisation it binds the
 * registry's validation rules (scopes, event types in request bodies: registered-values.ts).
 */
@Global()
@Module({})
export class ResourcesModule implements OnModuleInit {
  constructor(@Inject(RESOURCE_REGISTRY) private readonly registry: ResourceRegistry) {}

  /** The module providing `registry` under {@link RESOURCE_REGISTRY}. */
  static forRoot(registry: ResourceRegistry): DynamicModule {
    return { module: ResourcesModule, providers: [{ provide: RESOURCE_REGISTRY, useValue: registry }], exports: [RESOURCE_REGISTRY] };
  }

  onModuleInit(): void {
    bindRegistryValidation(this.registry);
  }
}
