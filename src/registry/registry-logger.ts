/** The part of a pino logger the registry uses, so tests can pass a recorder. */
export interface RegistryLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}
