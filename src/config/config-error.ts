/** Thrown for a bad environment value; its message is one line naming the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
