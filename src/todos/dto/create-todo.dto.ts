import { ApiHideProperty, ApiProperty, ApiSchema, PartialType } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { IsOmittable, ReadOnlyProperty } from '../../common/decorators/validation.decorators.js';
import { TODO_STATUSES, type TodoStatus } from '../todo.entity.js';

/** Body of `POST /v1/todos` and `PUT /v1/todos/{id}` (docs/resources/todos.md). */
@ApiSchema({ name: 'CreateTodoBody' })
export class CreateTodoDto {
  /** The owner is the caller; an `owner` sent (as read from a GET) is ignored. */
  @ReadOnlyProperty()
  @ApiHideProperty()
  declare owner?: never;

  /** 1-200 characters. */
  @ApiProperty({ example: 'Buy milk', minLength: 1 })
  @IsNotEmpty()
  @IsString()
  @MaxLength(200)
  title: string;

  /** Up to 10,000 characters; null when absent. */
  @ApiProperty({ type: 'string', required: false, nullable: true, example: 'Two litres, semi-skimmed.' })
  @IsOptional()
  @IsString()
  @MaxLength(10_000)
  content?: string | null;

  /** Defaults to `pending`; any transition is allowed. */
  @ApiProperty({ required: false, enum: TODO_STATUSES, default: 'pending', example: 'pending' })
  @IsOmittable()
  @IsString()
  @IsIn(TODO_STATUSES)
  status?: TodoStatus;
}

/** Body of `PUT /v1/todos/{id}`: the whole todo; omitted `content` → null, `status` → `pending`. */
@ApiSchema({ name: 'ReplaceTodoBody' })
export class ReplaceTodoDto extends CreateTodoDto {}

/** Body of `PATCH /v1/todos/{id}`: any subset; `null` clears `content`. */
@ApiSchema({ name: 'UpdateTodoBody' })
export class UpdateTodoDto extends PartialType(CreateTodoDto, { skipNullProperties: false }) {}
