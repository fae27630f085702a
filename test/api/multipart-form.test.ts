import { describe, expect, it } from 'vitest';
import { buildTestApp } from './test-app.js';

describe('a multipart body with no part under its boundary', () => {
  it('is said to be unreadable, not a form without `model`', async () => {
    const { app, close } = await buildTestApp(null);
    try {
      const res = await app.inject({ method: 'POST', url: '/v1/images/ocr', headers: { 'content-type': 'multipart/form-data; boundary=BOUND' }, payload: '--X\r\nbroken' });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'invalid_field', message: expect.stringContaining('The multipart body could not be read') });
      // A well-formed form without the field still names it.
      const empty = await app.inject({ method: 'POST', url: '/v1/images/ocr', headers: { 'content-type': 'multipart/form-data; boundary=BOUND' }, payload: '--BOUND\r\nContent-Disposition: form-data; name="x"\r\n\r\n1\r\n--BOUND--\r\n' });
      expect(empty.json().error.message).toContain('model');
    } finally {
      await close();
    }
  });
});
