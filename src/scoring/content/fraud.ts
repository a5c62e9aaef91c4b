/**
 * Fraud score: phishing and scam cues, combined by noisy-OR. Each cue that fires contributes
 * its weight w, and fraud = 1 - prod(1 - w). One strong cue alone gives a middling score; it
 * takes two or three (a prize plus a payment plus urgency) to get near 1. The weights are set by
 * hand (there is no labelled phishing set here) and checked on handmade examples in
 * test/unit/content-analysis.test.ts.
 *
 *   credentials   0.45  asks for a password, code, account verification or card details
 *   payment       0.35  wire transfer, gift cards, processing/release fees, bank account numbers
 *   prize         0.35  prizes, lotteries, "you have won" (flag `prize`)
 *   crypto_invest 0.40  crypto together with investment/profit/returns language
 *   loan          0.20  loan and debt offers (flag `loan`)
 *   urgency       0.20  pressure to act now (flag `urgency`), only with another cue
 *   shortener     0.20  a shortened link (flag `url_shortener`)
 *   link          0.10  any link, only with another cue
 */
import type { ContentFlag } from "./flags.js";
import { registerWordList, scanLeadWords } from "./lead-words.js";

const PAYMENT = /\b(?:wire transfer|western union|moneygram|gift cards?|itunes cards?|processing fee|release fee|clearance fee|transfer fee|bank account|account number|routing number|iban|swift code|send (?:the )?money|pay (?:the|a) fee|paypal|cash ?app|rekening|transfer(?:kan)?|havale|eft|iban)\b/i;
const INVEST = /\b(?:invest(?:ment|ing|or)?s?|profits?|returns?|roi|trading|double your|passive income|earn \$?\d|guaranteed (?:income|returns?|profit))\b/i;

/** Pre-check bits (lead-words.ts): a clear bit means the pattern cannot match. */
const PAYMENT_BIT = registerWordList(PAYMENT);
const INVEST_BIT = registerWordList(INVEST);

const W = { credentials: 0.45, payment: 0.35, prize: 0.35, crypto_invest: 0.4, loan: 0.2, urgency: 0.2, shortener: 0.2, link: 0.1 } as const;

/** Fraud cues of `text` given its flags, as a score in [0, 1] (4 decimals); `leads` is scanLeadWords(text). */
export function fraudScore(text: string, flags: readonly ContentFlag[], leads: number = scanLeadWords(text)): number {
  const has = (f: ContentFlag) => flags.includes(f);
  let keep = 1;
  let cues = 0;
  const add = (w: number) => {
    keep *= 1 - w;
    cues++;
  };
  if (has("credentials")) add(W.credentials);
  if ((leads & PAYMENT_BIT) !== 0 && PAYMENT.test(text)) add(W.payment);
  if (has("prize")) add(W.prize);
  if (has("crypto") && (leads & INVEST_BIT) !== 0 && INVEST.test(text)) add(W.crypto_invest);
  if (has("loan")) add(W.loan);
  if (has("url_shortener")) add(W.shortener);
  if (cues > 0) {
    if (has("urgency")) keep *= 1 - W.urgency;
    if (has("links")) keep *= 1 - W.link;
  }
  return Math.round((1 - keep) * 1e4) / 1e4;
}
