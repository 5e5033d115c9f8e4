import { ApiHideProperty, ApiProperty, ApiSchema, PartialType } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { ReadOnlyProperty } from '../../../../src/common/decorators/validation.decorators.js';
import { WIDGET_COLOURS, type WidgetColour } from '../widget.entity.js';

/** Body of `POST /v1/widgets`. */
@ApiSchema({ name: 'CreateWidgetBody' })
export class CreateWidgetDto {
  @ReadOnlyProperty()
  @ApiHideProperty()
  declare owner?: never;

  @ApiProperty({ example: 'Sprocket', minLength: 1, maxLength: 100 })
  @IsNotEmpty()
  @IsString()
  @MaxLength(100)
  name: string;

  @ApiProperty({ enum: WIDGET_COLOURS, example: 'red' })
  @IsNotEmpty()
  @IsString()
  @IsIn(WIDGET_COLOURS)
  colour: WidgetColour;
}

/** Body of `PATCH /v1/widgets/{id}`: any subset. */
@ApiSchema({ name: 'UpdateWidgetBody' })
export class UpdateWidgetDto extends PartialType(CreateWidgetDto, { skipNullProperties: false }) {}
