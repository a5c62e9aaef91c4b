import { describe, expect, it } from "vitest";
import { MAX_FORM_TEXT, formText } from "../../src/scoring/content/index.js";

describe("formText", () => {
  it("keeps free-text and name-like fields, subject and message first", () => {
    const r = formText({ name: "Jane Smith", company: "Acme Ltd", message: "Please call me back about the invoice.", subject: "Invoice 42" });
    expect(r.fields).toEqual(["message", "subject", "name", "company"]);
    expect(r.text).toBe("Please call me back about the invoice.\nInvoice 42\nJane Smith\nAcme Ltd");
  });

  it("skips contact coordinates, secrets, tokens, honeypots and hidden fields", () => {
    const r = formText({
      email: "jane@example.com", phone: "+1 555 123 4567", website: "https://example.com", password: "hunter2hunter2",
      _fs_signals: "eyJhbGciOi...", csrf_token: "abc def ghi", "g-recaptcha-response": "03AGdBq24...", honeypot: "buy now",
      "bot-field": "spam text", user_id: "u_123456", message: "Real text here",
    });
    expect(r.fields).toEqual(["message"]);
    expect(r.text).toBe("Real text here");
  });

  it("skips phone numbers, ids, numbers, short values, and lone e-mails outside message-like fields", () => {
    const r = formText({ a: "jane@example.com", c: "(332) 208-1772", d: "5f2b8c7e9a1d4e6f8b0c", e: "Hi", f: 42, g: true, h: null, i: "12345", comment: "A real comment" });
    expect(r.fields).toEqual(["comment"]);
    expect(r.flags).toEqual([]);
  });

  it("reads a field that is only a link as text and flags it link_only", () => {
    const r = formText({ name: "Jane Smith", message: "http://shhort.com/b?r=8f3Kq2" });
    expect(r.fields).toEqual(["message", "name"]);
    expect(r.text).toBe("http://shhort.com/b?r=8f3Kq2\nJane Smith");
    expect(r.flags).toEqual(["link_only"]);
    // Any text field, bare host or several links; a long opaque link too (not taken for an id).
    expect(formText({ company: "shhort.com/b?r=x" }).flags).toEqual(["link_only"]);
    expect(formText({ comment: "https://a.example/x https://b.example/y" }).flags).toEqual(["link_only"]);
    expect(formText({ body: "https://tinyurl.com/2p8h7k4z9d0q" }).fields).toEqual(["body"]);
    // A link inside a sentence is ordinary text; a field named like a URL is still not read.
    expect(formText({ message: "See https://example.com for the details" }).flags).toEqual([]);
    expect(formText({ website: "https://example.com", message: "Hello there" }).fields).toEqual(["message"]);
  });

  it("reads a message-like field that is only an e-mail address as text and flags it email_only", () => {
    const r = formText({ message: "win.big.now@mailinator.com" });
    expect(r).toEqual({ text: "win.big.now@mailinator.com", fields: ["message"], flags: ["email_only"] });
    // Elsewhere a lone address is a contact coordinate, not text.
    expect(formText({ contact: "jane@example.com" })).toEqual({ text: "", fields: [], flags: [] });
  });

  it("joins string arrays and ignores nested objects", () => {
    const r = formText({ interests: ["gardening", "cooking"], meta: { note: "nested text" } });
    expect(r.text).toBe("gardening, cooking");
  });

  it("bounds the text", () => {
    const r = formText({ message: "x ".repeat(5000), notes: "y ".repeat(5000), other: "z ".repeat(5000) });
    expect(r.text.length).toBeLessThanOrEqual(MAX_FORM_TEXT);
  });

  it("returns empty text for a form without text", () => {
    expect(formText({ email: "a@b.co", consent: true })).toEqual({ text: "", fields: [], flags: [] });
  });
});
