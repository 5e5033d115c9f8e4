import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TodosController } from './todos.controller.js';
import { TODOS } from './todos.resource.js';
import { TodosService } from './todos.service.js';

/** Todos resource (docs/resources/todos.md). */
@Module({
  imports: [TypeOrmModule.forFeature([...TODOS.entities])],
  controllers: [TodosController],
  providers: [TodosService],
})
export class TodosModule {}
