import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersController } from './users.controller.js';
import { USERS } from './users.resource.js';
import { UsersService } from './users.service.js';
import { UserLifecycle } from './user-lifecycle.js';

/**
 * Users resource (docs/resources/users.md). Exports UsersService for authentication, and the
 * UserLifecycle to which the modules owning what depends on a user register their reactions
 * (docs/extending.md#user-lifecycle-events).
 */
@Module({
  imports: [TypeOrmModule.forFeature([...USERS.entities])],
  controllers: [UsersController],
  providers: [UsersService, UserLifecycle],
  exports: [UsersService, UserLifecycle],
})
export class UsersModule {}
