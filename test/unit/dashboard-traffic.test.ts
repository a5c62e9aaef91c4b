import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { stackedChart } from "../../src/dashboard/chart.js";
import { csvDocument, csvRecord } from "../../src/dashboard/csv.js";

describe("csvDocument", () => {
  it("quotes a field with a comma, a double quote or a line break (RFC 4180) and ends every record with CRLF", () => {
    const doc = csvDocument(
      ["name", "hits"],
      [
        ["a,b", 1],
        ['say "hi"', 2],
        ["two\nlines", 3],
        ["cr\rhere", 4],
        [null, 5],
      ],
    );
    expect(doc).toBe('name,hits\r\n"a,b",1\r\n"say ""hi""",2\r\n"two\nlines",3\r\n"cr\rhere",4\r\n,5\r\n');
    // And a CSV parser reads back what was written.
    expect(parse(doc, { relax_column_count: false })).toEqual([
      ["name", "hits"],
      ["a,b", "1"],
      ['say "hi"', "2"],
      ["two\nlines", "3"],
      ["cr\rhere", "4"],
      ["", "5"],
    ]);
  });

  it("prefixes text starting with = + - @ tab or CR with ' so a spreadsheet does not run it as a formula; numbers stay numbers", () => {
    expect(csvRecord(['=HYPERLINK("http://x")', "+1", "-2", "@SUM(A1)", "\tx", "ok", -3, 0.25])).toBe(
      `"'=HYPERLINK(""http://x"")",'+1,'-2,'@SUM(A1),'\tx,ok,-3,0.25`,
    );
  });
});

describe("stackedChart", () => {
  const points = [
    { start: "2026-11-20T00:00:00.000Z", allow: 3, review: 1, block: 2 },
    { start: "2026-11-20T01:00:00.000Z", allow: 0, review: 0, block: 0 },
    { start: "2026-11-20T02:00:00.000Z", allow: 1, review: 0, block: 0 },
  ];

  it("stacks allow, review and block per bucket with a tooltip each, and says the totals in words", () => {
    const svg = stackedChart("c", "Hits over time", points, "hour", "hits");
    expect(svg).toContain('role="img"');
    expect(svg).toContain("<title>11-20 00h: 3 allow</title>");
    expect(svg).toContain("<title>11-20 00h: 2 block</title>");
    expect(svg.match(/<rect [^>]*><title>/g)).toHaveLength(4);
    expect(svg).toContain("7 hits: 4 allowed, 1 for review, 2 blocked; the busiest hour began 11-20 00h (UTC) with 6.");
  });

  it("says so when there is nothing in the range", () => {
    expect(
      stackedChart(
        "c",
        "Checks",
        points.map((p) => ({ ...p, allow: 0, review: 0, block: 0 })),
        "day",
        "checks",
      ),
    ).toContain("No checks in this range.");
  });
});
