import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { ApiSchema } from '@nestjs/swagger';
import { IsNotEmpty, IsString, Matches, MaxLength } from 'class-validator';
import { applyValidationRules } from './validation-rules.js';

/** A pattern kept in a constant, as `TAG_NAME` is: the plugin's generated metadata cannot carry it. */
const CODE = /^[a-z]{2,8}$/;

@ApiSchema({ name: 'RulesProbeBody' })
class RulesProbeDto {
  @IsNotEmpty()
  @IsString()
  @MaxLength(10)
  name: string;

  @IsNotEmpty()
  @IsString()
  username: string;

  @IsNotEmpty()
  count: number;

  @IsString({ each: true })
  @Matches(CODE, { each: true })
  codes: string[];

  @Matches(/^[0-9]+$/)
  digits: string;

  @Matches(/^[a-z]+$/i)
  letters: string;

  @IsNotEmpty()
  owner: unknown;
}

/** The schemas as the generator leaves them: the plugin's keywords and the `@ApiProperty` ones, before the rules. */
function generated(): Record<string, Record<string, any>> {
  return {
    RulesProbeBody: {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 10 },
        username: { type: 'string', minLength: 3, pattern: '^[a-z_]{3,32}$' },
        count: { type: 'number' },
        codes: { type: 'array', items: { type: 'string' } },
        digits: { type: 'string', pattern: '^[0-9]{1,4}$' },
        letters: { type: 'string' },
        owner: { $ref: '#/components/schemas/Owner' },
      },
    },
    Unrelated: { type: 'object', properties: { name: { type: 'string' } } },
  };
}

describe('applyValidationRules: the validators the Swagger plugin cannot state', () => {
  const schemas = generated();
  applyValidationRules(schemas);
  const properties = schemas.RulesProbeBody.properties;

  it('IsNotEmpty on a string → minLength 1, after the keywords already there; a stricter minLength stays', () => {
    expect(properties.name).toEqual({ type: 'string', maxLength: 10, minLength: 1 });
    expect(Object.keys(properties.name)).toEqual(['type', 'maxLength', 'minLength']);
    expect(properties.username).toEqual({ type: 'string', minLength: 3, pattern: '^[a-z_]{3,32}$' });
  });

  it('IsNotEmpty on a number or a $ref property adds nothing', () => {
    expect(properties.count).toEqual({ type: 'number' });
    expect(properties.owner).toEqual({ $ref: '#/components/schemas/Owner' });
  });

  it('Matches of a constant with each: true → the pattern of the items', () => {
    expect(properties.codes).toEqual({ type: 'array', items: { type: 'string', pattern: '^[a-z]{2,8}$' } });
  });

  it('Matches where the schema states a pattern (the plugin copied the literal, or a stricter one is stated) changes nothing; one with flags has no JSON Schema form', () => {
    expect(properties.digits).toEqual({ type: 'string', pattern: '^[0-9]{1,4}$' });
    expect(properties.letters).toEqual({ type: 'string' });
  });

  it('leaves the schemas of other classes alone, and finds a DTO by its @ApiSchema name, not its class name', () => {
    expect(schemas.Unrelated).toEqual(generated().Unrelated);
    const byClassName = { [RulesProbeDto.name]: { type: 'object', properties: { name: { type: 'string' } } } };
    applyValidationRules(byClassName);
    expect(byClassName.RulesProbeDto.properties.name).toEqual({ type: 'string' });
  });

  it('the rules the plugin states (MaxLength here) are not written again', () => {
    const bare = { RulesProbeBody: { type: 'object', properties: { name: { type: 'string' } } } };
    applyValidationRules(bare);
    expect(bare.RulesProbeBody.properties.name).toEqual({ type: 'string', minLength: 1 });
  });
});
