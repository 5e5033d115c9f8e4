import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { AuthModule } from './auth/auth.module.js';
import { CommonModule } from './common/common.module.js';
import { validateEnv } from './config/env.validation.js';
import { DatabaseModule } from './database/database.module.js';
import { TodosModule } from './todos/todos.module.js';
import { UsersModule } from './users/users.module.js';

/** The application: configuration, database, the shared pipeline, auth and the resources. */
@Module({
  imports: [
    ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, validate: validateEnv }),
    DatabaseModule,
    CommonModule,
    AuthModule,
    UsersModule,
    TodosModule,
  ],
})
export class AppModule {}
