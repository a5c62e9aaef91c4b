import bayes from "bayes";
import { describe, expect, it } from "vitest";
import { nbLogOdds } from "../../scripts/text/nb-baseline.js";

describe("naive Bayes baseline (scripts/text/nb-baseline.ts)", () => {
  it("scores with the package's own model: the sign of the log-odds is its categorize(), and odd tokens stay finite", async () => {
    const nb = bayes();
    const learn = (nb as { learn: (t: string, c: string) => Promise<unknown> }).learn.bind(nb);
    for (const t of ["win a free prize now", "cheap pills click here", "free money click now", "constructor of cheap prizes"]) await learn(t, "spam");
    for (const t of ["lunch at noon tomorrow", "the meeting notes are attached", "see you at the constructor meeting", "notes from lunch"])
      await learn(t, "ham");
    const categorize = (nb as { categorize: (t: string) => Promise<string> }).categorize.bind(nb);
    for (const text of ["free prize click", "meeting at noon", "cheap lunch notes"]) {
      const odds = nbLogOdds(nb as never, text);
      expect(Number.isFinite(odds), text).toBe(true);
      expect(odds > 0 ? "spam" : "ham", text).toBe(await categorize(text));
    }
    expect(Number.isFinite(nbLogOdds(nb as never, "constructor toString hasOwnProperty"))).toBe(true);
  });
});
