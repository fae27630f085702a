import { describe, expect, it } from 'vitest';
import { jsonSyntaxReason } from '../../src/config/json-syntax.js';

const reason = (text: string): string => {
  try {
    JSON.parse(text);
  } catch (err) {
    return jsonSyntaxReason(err);
  }
  throw new Error('parsed');
};

describe('why JSON did not parse', () => {
  it('keeps the reason and its position, never the text around the fault', () => {
    const said = reason('{"username":"admin","password":PW-SECRET-1}');
    expect(said).toBe("Unexpected token 'P' (the text is not valid JSON)");
    expect(reason(`${'x'.repeat(40)}{"password":PW-SECRET-1}`)).not.toContain('SECRET');
    expect(reason('{"a" 1}')).toBe("Expected ':' after property name in JSON at position 5");
    expect(reason('{"a":')).toBe('Unexpected end of JSON input');
  });
});
