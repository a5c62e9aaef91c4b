import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../src/config/index.js";
import { DOC_FILES, renderDocs } from "../../scripts/docs-examples.js";
import { WebhookReceiver } from "../helpers/webhook-receiver.js";
import { startDnsServer, type TestDnsServer } from "./helpers/dns-server.js";
import { ADMIN_TOKEN, startServer, type TestServer } from "./helpers/server.js";

/**
 * Docs that run: every example block of README.md, docs/api.md and docs/integrations.md is made
 * again against a fresh server (scripts/docs-examples.ts) and must read as committed. `npm run docs:examples`
 * (FS_DOCS_EXAMPLES=write) writes the blocks instead of comparing them.
 */

/**
 * The DNS the examples' server asks, so that an answer does not depend on the machine's network:
 * the mail exchangers the public DNS names for the domains they use (gmail.com, googlemail.com,
 * mailinator.com; none for gmsil.com, a typo domain) and one reverse name.
 */
const PUBLIC_DNS = {
  mx: {
    "gmail.com": [{ exchange: "gmail-smtp-in.l.google.com", priority: 5 }],
    "googlemail.com": [{ exchange: "gmail-smtp-in.l.google.com", priority: 5 }],
    "mailinator.com": [{ exchange: "mail.mailinator.com", priority: 1 }],
  },
  // A residential address whose reverse name resolves back to it (the deep check's example).
  ptr: { "73.15.20.30": "c-73-15-20-30.hsd1.ca.comcast.net" },
  a: { "c-73-15-20-30.hsd1.ca.comcast.net": ["73.15.20.30"] },
};

/**
 * Billing configured for the subscription's webhook example, whose Stripe event the examples sign
 * with this secret; the Stripe API is a closed local port, so that nothing leaves the machine.
 */
const STRIPE_WEBHOOK_SECRET = "whsec_docs_examples";
const BILLING = {
  STRIPE_SECRET_KEY: "sk_test_docs_examples",
  STRIPE_WEBHOOK_SECRET,
  STRIPE_PRICE_PRO: "price_docs_pro",
  STRIPE_PRICE_PRO_OVERAGE: "price_docs_pro_overage",
  STRIPE_PRICE_BUSINESS: "price_docs_business",
  STRIPE_PRICE_BUSINESS_OVERAGE: "price_docs_business_overage",
  STRIPE_API_HOST: "127.0.0.1",
  STRIPE_API_PORT: "9",
  STRIPE_API_PROTOCOL: "http",
};

let dns: TestDnsServer;
let server: TestServer;
const receiver = new WebhookReceiver();

beforeAll(async () => {
  dns = await startDnsServer(PUBLIC_DNS);
  await receiver.start();
  // One pool thread and one front thread, as the helpers start every server: the same answers on any machine.
  // The meter (a preview) is enabled for its example; webhooks may go to the local receiver (http).
  server = await startServer({
    FS_DNS_SERVERS: `127.0.0.1:${dns.port}`,
    FS_ENABLE_METER: "true",
    FS_WEBHOOK_ALLOW_HTTP: "true",
    FS_WEBHOOK_ALLOW_PRIVATE: "true",
    ...BILLING,
  });
});

afterAll(async () => {
  await server?.stop();
  server?.cleanup();
  await receiver.stop();
  await dns?.close();
});

describe("docs that run", () => {
  it("every example block of README.md, docs/api.md and docs/integrations.md is what the service answers (or delivers)", async () => {
    const files = Object.fromEntries(DOC_FILES.map((f) => [f, readFileSync(join(REPO_ROOT, f), "utf8")]));
    const rendered = await renderDocs({ url: server.url, adminToken: ADMIN_TOKEN, receiver, stripeWebhookSecret: STRIPE_WEBHOOK_SECRET }, files);
    if (process.env.FS_DOCS_EXAMPLES === "write") {
      for (const f of DOC_FILES) if (rendered[f] !== files[f]) writeFileSync(join(REPO_ROOT, f), rendered[f]!);
      return;
    }
    for (const f of DOC_FILES) expect.soft(rendered[f], `${f} differs from the service's answers: npm run docs:examples`).toBe(files[f]);
  });
});
