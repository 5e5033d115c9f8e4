import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { UserResponse } from '../../users/user.response.js';

/** A session, as `POST /v1/sessions` and `GET /v1/sessions/current` return it (docs/resources/sessions.md#the-session-object). */
@ApiSchema({ name: 'Session' })
export class SessionResponse {
  @ApiProperty({ type: UserResponse })
  user: UserResponse;

  /** Send it as `X-CSRF-Token` on POST, PUT, PATCH and DELETE made with the cookie. */
  @ApiProperty({ example: 'k3V9r1b2…' })
  csrf_token: string;

  /** The session's absolute end; it ends earlier after SESSION_IDLE_TTL seconds without use. */
  @ApiProperty({ format: 'date-time', example: '2026-11-21T22:15:00.000Z' })
  expires_at: string;
}
