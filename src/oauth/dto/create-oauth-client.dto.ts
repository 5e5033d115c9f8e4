import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsDefined,
  IsNotEmpty,
  IsString,
  MaxLength,
  registerDecorator,
  type ValidationArguments,
} from 'class-validator';
import { ArrayMaxRegistered, IsRegistered } from '../../common/resources/registered-values.js';
import { registeredCount, registeredList } from '../../common/resources/resource-registry.js';
import { redirectUriProblem } from '../redirect-uri.js';

/** The first acceptable-looking string of `value` (an array) that is not an acceptable redirect URI, with its problem. */
function firstBadRedirectUri(value: unknown): { uri: string; problem: string } | undefined {
  for (const uri of Array.isArray(value) ? value : []) {
    const problem = typeof uri === 'string' ? redirectUriProblem(uri) : null;
    if (problem) return { uri, problem };
  }
  return undefined;
}

/** class-validator rule: every element is an acceptable redirect URI ({@link redirectUriProblem}) → else 422. */
function IsRedirectUris() {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isRedirectUris',
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => firstBadRedirectUri(value) === undefined,
        defaultMessage: (args?: ValidationArguments) => {
          const bad = firstBadRedirectUri(args?.value);
          return `redirect URI ${JSON.stringify(bad?.uri)} ${bad?.problem ?? 'is invalid'}`;
        },
      },
    });
}

/** Body of `POST /v1/oauth-clients`: register a third-party application. */
@ApiSchema({ name: 'CreateOAuthClientBody' })
export class CreateOAuthClientDto {
  /** The application's name, shown to users on the consent page; 1-100 characters. */
  @ApiProperty({ example: 'Todo Sync' })
  @IsNotEmpty()
  @IsString()
  @MaxLength(100)
  name: string;

  /**
   * Where the authorize endpoint may send the user back, matched exactly: absolute https URIs
   * (http only for localhost, 127.0.0.1, [::1]), no fragment, no dot segments; 1-10.
   */
  @ApiProperty({
    type: [String],
    example: ['https://todo-sync.example/callback'],
    items: { type: 'string', format: 'uri', maxLength: 2000 },
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(10)
  @ArrayUnique()
  @IsString({ each: true })
  @IsRedirectUris()
  redirect_uris: string[];

  /** The widest access the client may ever be granted; users approve a subset. */
  @ApiProperty({ type: [String], enum: registeredList('scopes'), maxItems: registeredCount('scopes'), example: ['todos:read', 'todos:write'] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxRegistered('scopes')
  @ArrayUnique()
  @IsString({ each: true })
  @IsRegistered('scopes', 'scope', { each: true })
  scopes: string[];

  /**
   * true: a server-side application that keeps a secret (client_secret_basic / client_secret_post);
   * false: a public client (browser or native app) that authenticates with PKCE alone.
   */
  @ApiProperty({ example: true })
  @IsDefined()
  @IsBoolean()
  confidential: boolean;
}
