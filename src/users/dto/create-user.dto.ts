import { ApiHideProperty, ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsEmail, IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Length, Matches, Max, MaxLength, Min } from 'class-validator';
import { IsOmittable, ReadOnlyProperty } from '../../common/decorators/validation.decorators.js';
import { ROLES, type Role } from '../../common/caller/roles.js';

/** Body of `POST /v1/users`: public registration (docs/resources/users.md). */
@ApiSchema({ name: 'CreateUserBody' })
export class CreateUserDto {
  /** 3-32 characters of a-z, 0-9 and _; unique; cannot change later. */
  @ApiProperty({ example: 'ada_l', minLength: 3, maxLength: 32 })
  @IsNotEmpty()
  @IsString()
  @Matches(/^[a-z0-9_]{3,32}$/, { message: 'username must be 3-32 characters of a-z, 0-9 and _' })
  username: string;

  /** 8-128 characters. Never returned. */
  @ApiProperty({ writeOnly: true, format: 'password', example: 'correct horse battery' })
  @IsNotEmpty()
  @IsString()
  @Length(8, 128)
  password: string;

  /** Display name, 1-100 characters. */
  @ApiProperty({ example: 'Ada Lovelace', minLength: 1 })
  @IsNotEmpty()
  @IsString()
  @MaxLength(100)
  name: string;

  /** Age in years, 0-150. */
  @ApiProperty({ required: false, nullable: true, example: 36, type: 'integer' })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(150)
  age?: number | null;

  /** Unique e-mail address (compared case-insensitively). */
  @ApiProperty({ type: 'string', required: false, nullable: true, example: 'ada@example.com' })
  @IsOptional()
  @IsString()
  @IsEmail()
  @MaxLength(254)
  email?: string | null;

  /** Set only by verifying the address (docs/authentication.md#e-mail-verification); an `email_verified_at` sent (as read from a GET) is ignored. */
  @ReadOnlyProperty()
  @ApiHideProperty()
  declare email_verified_at?: never;

  /** `user` or `admin`; only admins may set it to anything but the current role (else 403). */
  @ApiProperty({ required: false, enum: ROLES, example: 'user' })
  @IsOmittable()
  @IsString()
  @IsIn(ROLES)
  role?: Role;
}
