import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatJson, normalise } from "../../scripts/docs-examples.js";

describe("normalise (docs examples)", () => {
  it("replaces ids, keys, request ids, timings and timestamps by placeholders, and keeps the rest", () => {
    const answer = {
      data: {
        id: "obs_I1ZKJ50KPj1",
        session_id: "s_LdBJDTIWljduxYUyph8XoB",
        created_at: "2026-11-24T18:22:24.852Z",
        score: 0.9997,
        continuity: { first_seen: 1795544544836, age_seconds: 5 },
        provenance: { cloud: { source: "aws", data_date: "2026-08-21T07:37:05.000Z" } },
        project: "prj_FUDH0rU51wVRTeeZ",
        key: "fs_pub_live_Hqn2TvOdabc",
        dataset: "ip-20261124T182127Z-928d4c2b",
        trial_end: null,
      },
      metadata: { request_id: "req_unLUF2dlBEIK_0", processing_time_ms: 7.852, credits: 1 },
    };
    expect(normalise(answer)).toEqual({
      data: {
        id: "obs_…",
        session_id: "s_…",
        created_at: "<time>",
        score: 0.9997,
        continuity: { first_seen: "<epoch ms>", age_seconds: "<s>" },
        provenance: { cloud: { source: "aws", data_date: "2026-08-21T07:37:05.000Z" } },
        project: "prj_…",
        key: "fs_pub_live_…",
        dataset: "ip-<build>",
        trial_end: null,
      },
      metadata: { request_id: "req_…", processing_time_ms: "<ms>", credits: 1 },
    });
  });

  it("replaces a webhook delivery's message id, Unix timestamp, signatures and a local receiver's port", () => {
    const headers = {
      "content-type": "application/json",
      "webhook-id": "msg_3xQ9lV0cP2mZ8aB1dE4fG7hJ",
      "webhook-timestamp": "1795544544",
      "webhook-signature": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= v1,3PBQ1B0d1hx3tiu9ZAe0whpbh8YFfWm+vE4Hqw+O+X8=",
    };
    expect(normalise(headers)).toEqual({
      "content-type": "application/json",
      "webhook-id": "msg_…",
      "webhook-timestamp": "<epoch s>",
      "webhook-signature": "v1,<signature> v1,<signature>",
    });
    expect(normalise({ url: "http://127.0.0.1:41877/hook" })).toEqual({ url: "http://127.0.0.1:<port>/hook" });
  });

  it("is idempotent: a normalised answer normalises to itself", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(normalise(normalise(v))).toEqual(normalise(v));
      }),
    );
  });
});

describe("formatJson (docs examples)", () => {
  it("writes valid JSON of the same value, whatever its shape", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(JSON.parse(formatJson(v))).toEqual(JSON.parse(JSON.stringify(v)));
      }),
    );
  });

  it("keeps a value that fits on one line, and opens one that does not one member a line", () => {
    expect(formatJson({ a: 1, b: [1, 2], c: {} })).toBe('{ "a": 1, "b": [1, 2], "c": {} }');
    const long = { message: "x".repeat(100), n: 1 };
    expect(formatJson(long)).toBe(`{\n  "message": "${"x".repeat(100)}",\n  "n": 1\n}`);
  });
});
