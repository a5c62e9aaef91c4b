/**
 * RFC 4180 CSV reader for the labelled text corpora and the snapshot's CSV lists (comma separator,
 * `"` quoting with `""` escapes, newlines allowed inside quoted fields, a header row).
 */

/**
 * Parses CSV text into records keyed by the header's column names.
 * Throws on a row whose field count differs from the header's, or on an unterminated quote:
 * the corpora are fixed files, so a malformed one means the input drifted.
 *
 * @example parseCsv('a,b\n1,"x,y"\n') // [{ a: "1", b: "x,y" }]
 */
export function parseCsv(text: string): Record<string, string>[] {
  const rows = splitCsvRows(text);
  const header = rows.shift();
  if (!header) return [];
  return rows.map((fields, i) => {
    if (fields.length !== header.length) throw new Error(`CSV row ${i + 2}: ${fields.length} fields, header has ${header.length}`);
    const record: Record<string, string> = {};
    header.forEach((name, k) => (record[name] = fields[k]!));
    return record;
  });
}

/** Splits CSV text into rows of fields; a trailing newline does not make an empty row. */
export function splitCsvRows(text: string): string[][] {
  const rows: string[][] = [];
  let fields: string[] = [];
  let field = "";
  let i = 0;
  const n = text.length;
  let rowStarted = false;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */ && field === "") {
      // Quoted field: read to the closing quote, unescaping "".
      let j = i + 1;
      let out = "";
      for (;;) {
        const q = text.indexOf('"', j);
        if (q < 0) throw new Error(`CSV: unterminated quote at offset ${i}`);
        out += text.slice(j, q);
        if (text.charCodeAt(q + 1) === 0x22) {
          out += '"';
          j = q + 2;
        } else {
          j = q + 1;
          break;
        }
      }
      field = out;
      i = j;
      rowStarted = true;
      continue;
    }
    if (c === 0x2c /* , */) {
      fields.push(field);
      field = "";
      rowStarted = true;
    } else if (c === 0x0a /* \n */ || c === 0x0d /* \r */) {
      if (c === 0x0d && text.charCodeAt(i + 1) === 0x0a) i++;
      if (rowStarted || field !== "") {
        fields.push(field);
        rows.push(fields);
      }
      fields = [];
      field = "";
      rowStarted = false;
    } else {
      field += text[i];
      rowStarted = true;
    }
    i++;
  }
  if (rowStarted || field !== "") {
    fields.push(field);
    rows.push(fields);
  }
  return rows;
}
