import { analyzeEmailWithMx } from "../../scoring/email.js";
import { emailLists } from "../../datasets/email-lists.js";
import type { EmailServices } from "../../datasets/mx.js";
import type { TestModeBudget } from "../../front/test-mode-budget.js";
import { defineRoute } from "../route.js";
import { emailBody, emailMetadata, emailResponse } from "../schemas/email.js";

/** Email intelligence costs 3 credits per call, whatever the answer. */
const EMAIL_CREDITS = 3;

/**
 * POST /v1/email (secret key, 3 credits): risk of one e-mail address.
 *
 * Body `{ email: string }` (schemas/email.ts). Response `data` is scoring/email.ts's EmailAnalysis:
 * `{ email, normalized, domain, score, decision, reasons, signals: { valid_syntax, syntax_error,
 * disposable, free_provider, role_account, role_category, plus_address, typo_suggestion,
 * mx: { found, outcome, hosts, implicit, null_mx } } }`.
 * A syntactically invalid address is an answer, not an error: 200, decision block, reason
 * invalid_syntax, no DNS query. A missing or non-string `email` is 400 VALIDATION_ERROR.
 * The MX lookup waits at most the resolver's timeout; when DNS fails the answer still goes out
 * (fail-open, reason mx_unresolved) and still costs 3 credits: the other signals were delivered.
 * `metadata.mx_cache` says whether DNS was queried ("miss"), answered from cache ("hit"), not
 * asked ("skipped"), or not asked as a test-mode key's DNS budget was spent ("test_budget");
 * `metadata.credits` is added by the router.
 */
export function emailPost(deps: { email: EmailServices; testMode: TestModeBudget }) {
  // Load the lists when the routing table is built, not on the first request (~0.5 s).
  emailLists();
  return defineRoute({
    method: "post",
    pattern: "/v1/email",
    auth: { kind: "secret" },
    body: emailBody,
    minCredits: EMAIL_CREDITS,
    docs: {
      summary: "Score an e-mail address",
      description: [
        "Risk of one e-mail address: syntax, disposable and free-mail providers, role accounts, +tags, typos of major providers, and whether its domain can receive mail (MX, waited for at most the resolver's timeout).",
        "A syntactically invalid address is an answer, not an error: decision block, reason invalid_syntax, no DNS query. When DNS fails the answer still goes out (reason mx_unresolved) and still costs its credits. `metadata.mx_cache` says whether DNS was queried.",
      ].join("\n\n"),
      tag: "scoring",
      response: emailResponse,
      metadata: emailMetadata,
      credits: [EMAIL_CREDITS],
      errors: [],
      example: {
        body: { email: "jane.doe+news@gmsil.com" },
        response: {
          email: "jane.doe+news@gmsil.com",
          normalized: "jane.doe@gmsil.com",
          domain: "gmsil.com",
          score: 0.6225,
          decision: "review",
          reasons: ["possible_typo", "plus_address"],
          signals: {
            valid_syntax: true,
            syntax_error: null,
            disposable: false,
            free_provider: false,
            role_account: false,
            role_category: null,
            plus_address: true,
            typo_suggestion: "jane.doe+news@gmail.com",
            mx: { found: true, outcome: "found", hosts: ["mx.gmsil.com"], implicit: false, null_mx: false },
          },
        },
        metadata: { mx_cache: "miss" },
      },
    },
    async handle({ body, principal, nowMs }) {
      // A test-mode key's lookup is on its org's DNS budget (front/test-mode-budget.ts).
      const { analysis, mxCache } = await analyzeEmailWithMx(deps.email, body.email, deps.testMode.dnsOf(principal, nowMs));
      return { data: analysis, credits: EMAIL_CREDITS, metadata: { mx_cache: mxCache } };
    },
  });
}
