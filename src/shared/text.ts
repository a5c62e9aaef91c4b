/**
 * Text that is stored and shown back (names, labels, reasons, pages): no control characters
 * (tab and newline only where a field allows several lines), no bidirectional controls (which can
 * make a listing read otherwise than it is stored, e.g. U+202E) and no lone surrogates (which are
 * not Unicode text and break other systems' JSON). API fields refuse such text with a 400; text a
 * browser sends on its own (the beacon's page path, parsed User-Agent parts) is cleaned instead.
 */

// C0 controls but tab and newline, DEL and C1 controls; bidi embeddings, overrides and isolates,
// and the directional marks; a high surrogate not followed by a low one, a low one not preceded by a high one.
const UNSAFE_MULTILINE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSAFE_LINE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSAFE_LINE_ALL = new RegExp(UNSAFE_LINE.source, "g");

/** The message an API field gets when it holds such characters. */
export const UNSAFE_TEXT_MESSAGE = "control characters, bidirectional controls and lone surrogates are not allowed";

/** True when `s` is one line of clean text. */
export function isCleanLine(s: string): boolean {
  return !UNSAFE_LINE.test(s);
}

/** True when `s` is clean text; tab and newline allowed. */
export function isCleanText(s: string): boolean {
  return !UNSAFE_MULTILINE.test(s);
}

/** `s` with every unsafe character (tab and newline included) removed. */
export function cleanLine(s: string): string {
  return UNSAFE_LINE.test(s) ? s.replace(UNSAFE_LINE_ALL, "") : s;
}
