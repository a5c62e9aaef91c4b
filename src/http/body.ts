import type { HttpResponse } from "uWebSockets.js";
import { ApiError } from "./errors.js";

/**
 * Reads a request body of at most `limit` bytes. Chunks are copied as they arrive (uWS detaches
 * them after the callback). Rejects with 413 as soon as the count passes the limit, without
 * waiting for the rest. The caller must have registered onAborted already.
 */
export function readBody(res: HttpResponse, limit: number, declaredLength: string): Promise<Buffer> {
  if (declaredLength) {
    const n = Number(declaredLength);
    if (Number.isFinite(n) && n > limit) return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    res.onData((chunk, isLast) => {
      if (done) return;
      size += chunk.byteLength;
      if (size > limit) {
        done = true;
        reject(tooLarge(limit));
        return;
      }
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) {
        done = true;
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      }
    });
  });
}

function tooLarge(limit: number): ApiError {
  return new ApiError("PAYLOAD_TOO_LARGE", `Request body exceeds the limit of ${limit} bytes.`);
}

/** true for `application/json`, with or without parameters such as charset. */
export function isJsonContentType(value: string): boolean {
  const semi = value.indexOf(";");
  const type = (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase();
  return type === "application/json";
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Parses JSON text; a syntax error becomes 400 VALIDATION_ERROR naming the body as the failing
 * path and the parser's position.
 */
export function parseJson(buf: Buffer): unknown {
  if (buf.length === 0) throw new ApiError("VALIDATION_ERROR", "body: a JSON body is required.");
  let text: string;
  try {
    text = UTF8.decode(buf);
  } catch {
    throw new ApiError("VALIDATION_ERROR", "body: not valid UTF-8.");
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ApiError("VALIDATION_ERROR", `body: malformed JSON (${(err as Error).message}).`);
  }
}
