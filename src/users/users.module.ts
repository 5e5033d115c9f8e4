import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersController } from './users.controller.js';
import { USERS } from './users.resource.js';
import { UsersService } from './users.service.js';

/** Users resource (docs/resources/users.md). Exports UsersService for authentication. */
@Module({
  imports: [TypeOrmModule.forFeature([...USERS.entities])],
  controllers: [UsersController],
  providers: [UsersService],
  exports: [UsersService],
})
export class UsersModule {}
