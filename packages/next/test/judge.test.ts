import { beforeAll, describe, expect, it } from "vitest";
import { clientAddress, createFormJudge, protect, type NextProtectOptions } from "../src/index.js";
import { useApp, type TestApp } from "../../../test/helpers/app.js";
import { admin, createOrgWithKey } from "../../../test/integration/helpers/server.js";

/**
 * @fraudscore/next without a Next.js process: what a route handler and a Server Action hand it
 * (web Requests, FormData, Headers), against the real service in process (test/helpers/app.ts).
 * The framework itself is in next.test.ts (examples/next-signup, built and started).
 */
let server!: TestApp;
useApp((s) => (server = s));
let testKey = "";
beforeAll(async () => {
  const org = await createOrgWithKey(server);
  testKey = (await admin(server, "POST", `/v1/admin/orgs/${org.orgId}/keys`, { type: "secret", mode: "test", scopes: ["sessions"] })).body.data.key;
});

const service = (extra: Partial<NextProtectOptions> = {}): NextProtectOptions => ({
  baseUrl: server.url,
  apiKey: testKey,
  fetch: ((url: string, init?: RequestInit) => server.fetch(url, init)) as typeof fetch,
  ...extra,
});
const UA = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
const clean = { name: "Jane Doe", email: "jane.doe@gmail.com", about: "I run a small bakery in Lyon and would like to try the service." };

/** A route handler wrapped by protect that answers the verdict and the body it could still read. */
const route = (options: NextProtectOptions, read: (request: Request) => Promise<unknown>) =>
  protect(options, async (request: Request, verdict) => Response.json({ verdict, body: await read(request) }));

describe("@fraudscore/next in a route handler and a Server Action", () => {
  it("reads a JSON body from a clone: the handler still reads it", async () => {
    const POST = route(service({ fields: ["about"] }), (r) => r.json());
    const answer = await POST(
      new Request("http://app.test/signup", {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": UA },
        body: JSON.stringify({ ...clean, email: "bot@block.fraudscore.test" }),
      }),
      {},
    );
    const { verdict, body } = (await answer.json()) as { verdict: { decision: string; source: string }; body: { email: string } };
    expect(verdict).toMatchObject({ decision: "block", source: "service" });
    expect(body.email).toBe("bot@block.fraudscore.test");
  });

  it("reads a multipart form, files left out, and a clean one passes", async () => {
    const form = new FormData();
    for (const [k, v] of Object.entries(clean)) form.append(k, v);
    form.append("avatar", new Blob(["png"]), "a.png");
    const POST = route(service({ kind: "signup" }), async (r) => Object.fromEntries([...(await r.formData()).keys()].map((k) => [k, true])));
    const answer = await POST(new Request("http://app.test/signup", { method: "POST", headers: { "user-agent": UA }, body: form }), {});
    const { verdict, body } = (await answer.json()) as { verdict: { decision: string; source: string }; body: Record<string, boolean> };
    expect(verdict.source).toBe("service");
    expect(verdict.decision).not.toBe("block");
    expect(body).toMatchObject({ name: true, avatar: true });
  });

  it("a body that does not parse is judged without fields, and the handler gets it as sent", async () => {
    const POST = route(service({ trustProxy: 1 }), (r) => r.text());
    const answer = await POST(
      new Request("http://app.test/signup", {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": UA, "x-forwarded-for": "198.51.100.1" },
        body: "{not json",
      }),
      {},
    );
    const { verdict, body } = (await answer.json()) as { verdict: { source: string }; body: string };
    expect(verdict.source).toBe("service");
    expect(body).toBe("{not json");
  });

  it("judges a Server Action's FormData with the request's headers, the address from the trusted proxy", async () => {
    const judge = createFormJudge(service({ trustProxy: 1 }));
    const form = new FormData();
    for (const [k, v] of Object.entries(clean)) form.append(k, v);
    // 203.0.113.66 is a blocked address for test keys; the proxy appended it after the client's claim.
    const headers = new Headers({ "user-agent": UA, "x-forwarded-for": "198.51.100.1, 203.0.113.66" });
    expect((await judge(form, headers)).decision).toBe("block");
    expect((await createFormJudge(service({ trustProxy: 2 }))(form, headers)).decision).not.toBe("block");
    expect((await createFormJudge(service())(form, headers)).decision).not.toBe("block");
  });
});

describe("clientAddress (trustProxy)", () => {
  it("reads X-Forwarded-For only from as many proxies as trusted", () => {
    const h = new Headers({ "x-forwarded-for": "198.51.100.7, 203.0.113.9, 10.0.0.2", "x-real-ip": "10.0.0.9" });
    expect(clientAddress(h, false)).toBeUndefined();
    expect(clientAddress(h, 0)).toBeUndefined();
    expect(clientAddress(h, 1)).toBe("10.0.0.2");
    expect(clientAddress(h, 2)).toBe("203.0.113.9");
    expect(clientAddress(h, 9)).toBe("198.51.100.7");
    expect(clientAddress(h, true)).toBe("198.51.100.7");
  });

  it("falls back to X-Real-IP, and sends nothing without either", () => {
    expect(clientAddress(new Headers({ "x-real-ip": " 203.0.113.5 " }), 1)).toBe("203.0.113.5");
    expect(clientAddress(new Headers({}), true)).toBeUndefined();
  });
});
