/**
 * Which fields of a submitted form count as text for the content model.
 *
 * Rule, applied to each top-level field in the order given (arrays of strings are joined with
 * ", "; numbers, booleans, objects and null are never text):
 * 1. Skip by name: hidden/technical fields (a leading `_`, e.g. `_fs_signals`, `_gotcha`;
 *    token, csrf, nonce, captcha, recaptcha/hcaptcha/turnstile responses, signatures),
 *    secrets (password, pin, card, cvv, iban), honeypots (honeypot, hp, bot-field, fax,
 *    website2...), contact coordinates and identifiers (email, phone/tel/mobile, url/website/link,
 *    zip/postcode, date/dob, ids such as `id`, `user_id`, `uuid`).
 * 2. Skip by value: shorter than MIN_FIELD_CHARS after trimming, no letter at all, a lone
 *    phone number, a lone e-mail address outside a message-like field, or a single token of
 *    16+ characters without spaces (ids, hashes, base64) unless it is a link.
 *    A field that is only a link counts as text (a bare link is a classic spam message) and
 *    raises the flag `link_only`; a message-like field that is only an e-mail address counts
 *    too and raises `email_only`. Fields named url/website/link are still skipped by name (1).
 * 3. Everything else counts, names and company fields included (spam often carries its pitch
 *    or brand in the name field). Subject- and message-like fields come first (subject, title,
 *    message, comment, body, content, description, enquiry, question, details, text, notes),
 *    then the rest in the order given, so truncation keeps the free text.
 * Each field is cut to MAX_FIELD_CHARS, fields are joined by newlines, and the whole text is
 * cut to MAX_FORM_TEXT characters.
 */

import { isEmailOnly, isLinkOnly, type ContentFlag } from "./flags.js";

export const MIN_FIELD_CHARS = 4;
export const MAX_FIELD_CHARS = 2000;
export const MAX_FORM_TEXT = 5000;

const SKIP_NAME = /^_|token|csrf|xsrf|nonce|captcha|turnstile|signature|^sig$|passw|pwd|secret|^pin$|cvv|cvc|card|iban|honeypot|^hp(?:_|$)|bot[-_]?field|^fax$|website2|e-?mail|^mail$|phone|^tel$|telephone|mobile|whatsapp|^url$|_url$|^url_|website|homepage|^link$|^site$|zip|postcode|postal|^date|_date$|^dob$|birth|^id$|_id$|^uuid$|guid|^ip$|user[-_]?agent|referr?er|^utm_|gclid|fbclid/i;
const FIRST_NAME = /subject|title|message|comment|body|content|description|enquiry|inquiry|question|details|^text$|notes?$|^msg$/i;
const LONE_PHONE = /^\+?[\d\s().-]{6,}$/;
const LONE_TOKEN = /^[\w+/=.-]{16,}$/;
const HAS_LETTER = /\p{L}/u;

function fieldValue(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "string")) return (v as string[]).join(", ");
  return null;
}

/** What a field's value is for the content model: ordinary text, a bare link, a bare e-mail address, or nothing. */
function kindOf(value: string, messageLike: boolean): "text" | "link_only" | "email_only" | null {
  if (value.length < MIN_FIELD_CHARS || !HAS_LETTER.test(value)) return null;
  if (isLinkOnly(value)) return "link_only";
  if (isEmailOnly(value)) return messageLike ? "email_only" : null;
  if (LONE_PHONE.test(value) || LONE_TOKEN.test(value)) return null;
  return "text";
}

/**
 * The text of a form for the content model, and the names of the fields it came from.
 *
 * @example formText({ name: "Ann", email: "a@b.co", message: "Hello there" })
 * // { text: "Hello there", fields: ["message"], flags: [] }  ("Ann" is shorter than MIN_FIELD_CHARS)
 */
export function formText(form_data: Record<string, unknown>): { text: string; fields: string[]; flags: FieldFlag[] } {
  const first: [string, string][] = [];
  const rest: [string, string][] = [];
  const raised = new Set<FieldFlag>();
  for (const [name, raw] of Object.entries(form_data)) {
    if (SKIP_NAME.test(name)) continue;
    const v = fieldValue(raw);
    if (v === null) continue;
    const value = v.trim();
    const messageLike = FIRST_NAME.test(name);
    const kind = kindOf(value, messageLike);
    if (kind === null) continue;
    if (kind !== "text") raised.add(kind);
    (messageLike ? first : rest).push([name, value.length > MAX_FIELD_CHARS ? value.slice(0, MAX_FIELD_CHARS) : value]);
  }
  const used = [...first, ...rest];
  let text = used.map(([, v]) => v).join("\n");
  if (text.length > MAX_FORM_TEXT) text = text.slice(0, MAX_FORM_TEXT);
  return { text, fields: used.map(([n]) => n), flags: FIELD_FLAGS.filter((f) => raised.has(f)) };
}

/** Flags a single field can raise (a field that is only a link / only an e-mail address). */
export const FIELD_FLAGS = ["link_only", "email_only"] as const satisfies readonly ContentFlag[];
export type FieldFlag = (typeof FIELD_FLAGS)[number];
