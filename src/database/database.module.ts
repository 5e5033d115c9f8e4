import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import type { Env } from '../config/env.validation.js';
import { buildDataSourceOptions } from './data-source.js';
import { syncSqliteTransactions } from './sqlite-transactions.js';

/**
 * The TypeORM connection from DATABASE_URL; migrations are applied on start-up. On SQLite the
 * query runner's transaction state follows the connection's ({@link syncSqliteTransactions}), so a
 * storage fault (disk full, I/O error) leaves no transaction open behind it.
 */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<Env, true>) =>
        ({
        ...buildDataSourceOptions(
          config.get('DATABASE_URL', { infer: true }),
          config.get('DB_POOL_SIZE', { infer: true }),
          config.get('DB_QUERY_TIMEOUT_MS', { infer: true }),
        ),
        retryAttempts: 3,
        retryDelay: 1000,
      }),
      dataSourceFactory: async (options?: DataSourceOptions) => syncSqliteTransactions(await new DataSource(options!).initialize()),
    }),
  ],
})
export class DatabaseModule {}
