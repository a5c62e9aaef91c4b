/**
 * CSV for the dashboard's downloads (RFC 4180): fields separated by commas, records by CRLF; a
 * field holding a comma, a double quote, CR or LF is quoted, its quotes doubled. A text cell
 * starting with `=`, `+`, `-`, `@`, a tab or CR is prefixed with `'` so that a spreadsheet shows it
 * as text rather than run it as a formula (OWASP "CSV injection"): such text comes from the
 * visitors (a bot's name) or the org. Numbers are written as they are.
 */

/** One CSV record from its cells. */
export function csvRecord(cells: ReadonlyArray<string | number | boolean | null>): string {
  return cells.map(csvField).join(",");
}

/** A whole CSV document: the header, then the rows, each record ended by CRLF. */
export function csvDocument(header: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number | boolean | null>>): string {
  let out = `${csvRecord(header)}\r\n`;
  for (const r of rows) out += `${csvRecord(r)}\r\n`;
  return out;
}

function csvField(v: string | number | boolean | null): string {
  if (v === null) return "";
  if (typeof v !== "string") return String(v);
  const text = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
