/** The roles a caller can have (docs/authentication.md#roles-and-scopes): `user` (default) and `admin`. */
export const ROLES = ['user', 'admin'] as const;
export type Role = (typeof ROLES)[number];
