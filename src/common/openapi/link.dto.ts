import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** A hypermedia link (SPEC §4): relation name and path. Schema `Link`. */
@ApiSchema({ name: 'Link' })
export class LinkDto {
  @ApiProperty({ example: 'self' })
  rel: string;

  @ApiProperty({ example: '/v{version}/todos/1' })
  href: string;
}
