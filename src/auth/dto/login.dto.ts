import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';

/** Body of `POST /v1/login`. */
@ApiSchema({ name: 'LoginBody' })
export class LoginDto {
  /** The account's username. */
  @ApiProperty({ example: 'ada_l' })
  @IsNotEmpty()
  @IsString()
  @MaxLength(64)
  username: string;

  /** The account's password. */
  @ApiProperty({ writeOnly: true, format: 'password', example: 'correct horse battery' })
  @IsNotEmpty()
  @IsString()
  @MaxLength(128)
  password: string;
}

/** Body of `POST /v1/refresh`. */
@ApiSchema({ name: 'RefreshBody' })
export class RefreshDto {
  /** A refresh token from `POST /v{version}/login` or an earlier refresh; each works once. */
  @ApiProperty({ writeOnly: true, example: 'Zq3c7…' })
  @IsNotEmpty()
  @IsString()
  @MaxLength(1024)
  refresh_token: string;
}
