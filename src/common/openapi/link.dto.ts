import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** A hypermedia link (docs/lists.md#the-envelope): relation name and path. Schema `Link`. */
@ApiSchema({ name: 'Link' })
export class LinkDto {
  @ApiProperty({ example: 'self' })
  rel: string;

  @ApiProperty({ example: '/v{version}/todos/1' })
  href: string;
}
