import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Env } from '../config/env.validation.js';
import { RESOURCE_REGISTRY, type ResourceRegistry } from '../common/resources/resource-registry.js';
import { buildDataSourceOptions, openDataSource, schemaOf } from './data-source.js';

/**
 * The TypeORM connection from DATABASE_URL, for the schema of the declarations handed down
 * ({@link RESOURCE_REGISTRY}: their entities and migrations, {@link schemaOf}) (with DB_POOL_SIZE, DB_QUERY_TIMEOUT_MS, DB_POOLER and
 * DB_PREPARED_STATEMENTS: see {@link buildDataSourceOptions}); migrations are applied on start-up. On SQLite each
 * transaction has the one connection to itself until it ends, and TypeORM's transaction state
 * follows the connection's after a storage fault ({@link openDataSource}).
 */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [ConfigService, RESOURCE_REGISTRY],
      useFactory: (config: ConfigService<Env, true>, registry: ResourceRegistry) => ({
        ...buildDataSourceOptions(
          config.get('DATABASE_URL', { infer: true }),
          schemaOf(registry.resources),
          config.get('DB_POOL_SIZE', { infer: true }),
          config.get('DB_QUERY_TIMEOUT_MS', { infer: true }),
          { pooler: config.get('DB_POOLER', { infer: true }), preparedStatements: config.get('DB_PREPARED_STATEMENTS', { infer: true }) },
        ),
        retryAttempts: 3,
        retryDelay: 1000,
      }),
      dataSourceFactory: (options) => openDataSource(options!),
    }),
  ],
})
export class DatabaseModule {}
