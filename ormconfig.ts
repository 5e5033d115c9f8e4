import { DataSource } from 'typeorm';
import { validateEnv } from './src/config/env.validation.js';
import { buildDataSourceOptions, schemaOf } from './src/database/data-source.js';
import { RESOURCES } from './src/resources.js';

/** The DataSource the TypeORM migration CLI uses (`npm run migration:run`); same options as the app. */
const env = validateEnv(process.env);
export default new DataSource({
  ...buildDataSourceOptions(env.DATABASE_URL, schemaOf(RESOURCES), env.DB_POOL_SIZE, env.DB_QUERY_TIMEOUT_MS),
  migrationsRun: false,
});
