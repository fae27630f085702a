import { describe, expect, it } from 'vitest';
import { printable } from '../../src/cli/terminal.js';
import { formatTable } from '../../src/cli/table.js';

describe('what the CLI prints of a server\'s text', () => {
  it('writes control characters out, so an escape sequence never reaches the terminal', () => {
    expect(printable('model \u001b]0;owned\u0007 not found')).toBe('model \\u001b]0;owned\\u0007 not found');
    expect(printable('c1 \u009b31m red')).toBe('c1 \\u009b31m red');
    expect(printable('plain text, ünïcode, 日本')).toBe('plain text, ünïcode, 日本');
  });

  it('writes bidi overrides and isolates out, so a line shows the text it holds', () => {
    expect(printable('qwen\u202egnp.exe')).toBe('qwen\\u202egnp.exe');
    expect(printable('a\u2066b\u2069c\u202ad')).toBe('a\\u2066b\\u2069c\\u202ad');
    expect(printable('שלום \u200fmark')).toBe('שלום \u200fmark');
  });

  it('keeps each table cell on one line of plain text', () => {
    const table = formatTable(['Name', 'Note'], [['a\u001b[2Jb', 'two\nlines']]);
    expect(table.split('\n')).toHaveLength(3);
    expect(table).toContain('a\\u001b[2Jb');
    expect(table).toContain('two lines');
  });
});
