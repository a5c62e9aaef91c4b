import { describe, expect, it } from "vitest";
import { parseCsv, splitCsvRows } from "../../scripts/text/csv.js";

describe("CSV of the corpora and the snapshot's lists (scripts/text/csv.ts)", () => {
  it("reads quoted fields with commas, newlines and doubled quotes, CRLF rows, and skips empty lines", () => {
    const text = 'text,label\r\n"hello, world",ham\r\n\r\n"two\nlines",spam\n"say ""hi""",ham\n';
    expect(parseCsv(text)).toEqual([
      { text: "hello, world", label: "ham" },
      { text: "two\nlines", label: "spam" },
      { text: 'say "hi"', label: "ham" },
    ]);
  });

  it("keeps a quote inside an unquoted field as it is", () => {
    expect(parseCsv('a,b\n5" screen,ham\n')).toEqual([{ a: '5" screen', b: "ham" }]);
  });

  it("throws on a row whose field count differs from the header's, and on an unterminated quote", () => {
    expect(() => parseCsv("a,b\n1,2,3\n")).toThrow();
    expect(() => parseCsv('a,b\n"open,1\n')).toThrow();
  });

  it("splits rows of any width, with no empty row for the trailing newline", () => {
    expect(splitCsvRows("a,b\n1\n2,3,4\n")).toEqual([["a", "b"], ["1"], ["2", "3", "4"]]);
    expect(splitCsvRows("")).toEqual([]);
  });
});
