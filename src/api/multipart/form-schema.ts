import { z } from 'zod';

declare module 'fastify' {
  interface FastifySchema {
    /**
     * The documented multipart body of an upload route (openapi.ts moves it into the
     * document's request body). Documentation only: upload routes read and check their
     * parts themselves (form.ts), so fastify must not validate a body here.
     */
    multipartBody?: z.ZodType;
  }
}

/**
 * An upload route's schema fragment: `multipart/form-data` with its text fields (the
 * same zod object the route checks them with) and its files as binary strings.
 */
export function multipartSchema(fields: z.ZodObject, files: { required?: readonly string[]; optional?: readonly string[] }): { consumes: string[]; multipartBody: z.ZodType } {
  const file = (optional: boolean) => {
    const binary = z.string().meta({ format: 'binary', description: 'the uploaded file' });
    return optional ? binary.optional() : binary;
  };
  const shape: Record<string, z.ZodType> = {};
  for (const name of files.required ?? []) shape[name] = file(false);
  for (const name of files.optional ?? []) shape[name] = file(true);
  return { consumes: ['multipart/form-data'], multipartBody: fields.extend(shape) };
}
