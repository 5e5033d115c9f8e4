import { ApiProperty, OmitType, PartialType, ApiSchema } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';
import { IsOmittable } from '../../common/decorators/validation.decorators.js';
import { CreateUserDto } from './create-user.dto.js';

/**
 * Body of `PUT /v1/users/{id}`: the whole user. `name` is required; omitted `age` and `email`
 * become null. `username` may be sent (as read) but not changed; `password` only when changing it.
 */
@ApiSchema({ name: 'ReplaceUserBody' })
export class ReplaceUserDto extends OmitType(CreateUserDto, ['username', 'password'] as const) {
  /** Must equal the current username (it is immutable); may be omitted. */
  @ApiProperty({ required: false, minLength: 3, maxLength: 32, example: 'ada_l' })
  @IsOmittable()
  @IsString()
  username?: string;

  /** A new password, 8-128 characters; omitted keeps the current one. */
  @ApiProperty({ required: false, writeOnly: true, format: 'password', example: 'an even better passphrase' })
  @IsOmittable()
  @IsString()
  @Length(8, 128)
  password?: string;
}

/** Body of `PATCH /v1/users/{id}`: any subset of the replace body; `null` clears `age` or `email`. */
@ApiSchema({ name: 'UpdateUserBody' })
export class UpdateUserDto extends PartialType(ReplaceUserDto, { skipNullProperties: false }) {}
