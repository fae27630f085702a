import { describe, expect, it } from 'vitest';
import { loggedUrl } from '../../src/api/request-logging.js';

describe('the URL a debug log line keeps', () => {
  it('blanks credentials a client put in the query string, and keeps the rest as sent', () => {
    expect(loggedUrl('/v1/models?api_key=sk-abc&detailed=true')).toBe('/v1/models?api_key=[redacted]&detailed=true');
    expect(loggedUrl('/token?username=low&password=LowPassw0rd!!')).toBe('/token?username=low&password=[redacted]');
    expect(loggedUrl('/v1/x?access%5Ftoken=eyJ&Key=1&window=5m')).toBe('/v1/x?access%5Ftoken=[redacted]&Key=[redacted]&window=5m');
    expect(loggedUrl('/v1/models')).toBe('/v1/models');
    expect(loggedUrl('/v1/models?flag&%zz=1')).toBe('/v1/models?flag&%zz=1');
  });
});
