/**
 * RFC 4180 CSV for the labelled text corpora and the snapshot's CSV lists (comma separator, `"`
 * quoting with `""` escapes, newlines allowed inside quoted fields, a header row), read with
 * csv-parse. A quote inside an unquoted field is taken as it is (some corpora have them); empty
 * lines are skipped.
 */
import { parse, type Options } from "csv-parse/sync";

/** Rows end at CRLF, LF or CR, mixed in one file; a quote inside an unquoted field is data. */
const OPTIONS: Options = { relax_quotes: true, skip_empty_lines: true, record_delimiter: ["\r\n", "\n", "\r"] };

/**
 * Parses CSV text into records keyed by the header's column names.
 * Throws on a row whose field count differs from the header's, or on an unterminated quote:
 * the corpora are fixed files, so a malformed one means the input drifted.
 *
 * @example parseCsv('a,b\n1,"x,y"\n') // [{ a: "1", b: "x,y" }]
 */
export function parseCsv(text: string): Record<string, string>[] {
  return parse(text, { ...OPTIONS, columns: true }) as unknown as Record<string, string>[];
}

/** Splits CSV text into rows of fields; a trailing newline does not make an empty row. */
export function splitCsvRows(text: string): string[][] {
  return parse(text, { ...OPTIONS, relax_column_count: true }) as string[][];
}
