import { printable } from './terminal.js';

/** An aligned text table: a header row, a rule, then one row per item; cells padded to the widest. */
export function formatTable(headers: string[], rows: unknown[][]): string {
  const cells = rows.map((row) => row.map(cellText));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) => row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(cellText).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  // A cell is one line of plain text, whatever a server sent (a newline would break the table's rows).
  return printable(String(value).replace(/[\r\n\t]/g, ' '));
}
