import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ArrayMinSize, ArrayUnique, IsArray, IsDateString, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { ArrayMaxRegistered, IsRegistered } from '../../common/resources/registered-values.js';
import { registeredCount, registeredList } from '../../common/resources/resource-registry.js';

/** Body of `POST /v1/api-keys` (docs/authentication.md#api-keys). */
@ApiSchema({ name: 'CreateApiKeyBody' })
export class CreateApiKeyDto {
  /** A label for the key, 1-100 characters. */
  @ApiProperty({ example: 'nightly export' })
  @IsNotEmpty()
  @IsString()
  @MaxLength(100)
  name: string;

  /** What the key may do: `<collection>:read` / `<collection>:write`, at least one. */
  @ApiProperty({ type: [String], enum: registeredList('scopes'), maxItems: registeredCount('scopes'), example: ['todos:read', 'todos:write'] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxRegistered('scopes')
  @ArrayUnique()
  @IsString({ each: true })
  @IsRegistered('scopes', 'scope', { each: true })
  scopes: string[];

  /** When the key stops working (ISO 8601, in the future); never when absent. */
  @ApiProperty({ type: 'string', format: 'date-time', required: false, nullable: true, example: '2027-01-01T00:00:00.000Z' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  @IsDateString({ strict: true })
  expires_at?: string | null;
}
