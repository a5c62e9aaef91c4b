import { z, type ZodType } from "zod";
import type { InputShape, Route } from "./route.js";
import { invalidInput, validate } from "./validate.js";

/**
 * The router's reading of a route's path parameters and query string with the route's own
 * schemas (Route.params, Route.query): decoded, validated, and handed to the handler by name
 * (`ctx.params.orgId`, `ctx.query.limit`). A failure is 400 VALIDATION_ERROR naming the input
 * (`path.orgId`, `query.limit`) with its problems, as a body's is (validate.ts).
 */
export interface RouteInputs {
  /** `ctx.params` from the raw path segments (RequestSnapshot.params, in pattern order). */
  params(raw: readonly string[]): Record<string, unknown>;
  /** `ctx.query` from the raw query string (without `?`). */
  query(raw: string): Record<string, unknown>;
}

/** Names of a pattern's path parameters, in order. */
export function pathParams(pattern: string): string[] {
  return [...pattern.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
}

const NONE: Record<string, unknown> = Object.freeze({});
/** Query strings longer than this are parsed each time rather than remembered. */
const CACHED_QUERY_CHARS = 256;
/** Distinct query strings remembered per route. */
const CACHED_QUERIES = 256;

const compiled = new WeakMap<object, RouteInputs>();

/** The inputs reader of `route`, built on first use. */
export function inputsOf(route: Route<any>): RouteInputs {
  let inputs = compiled.get(route);
  if (inputs === undefined) {
    inputs = { params: paramsReader(route), query: queryReader(route.query) };
    compiled.set(route, inputs);
  }
  return inputs;
}

function paramsReader(route: Route<any>): RouteInputs["params"] {
  const names = pathParams(route.pattern);
  if (names.length === 0) return () => NONE;
  const schemas: ZodType[] = names.map((name) => {
    const schema = (route.params as InputShape | undefined)?.[name];
    if (!schema) throw new Error(`route ${route.pattern}: no schema for path parameter ${name} (Route.params)`);
    return schema;
  });
  const roots = names.map((name) => `path.${name}`);
  return (raw) => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) out[names[i]!] = validate(schemas[i]!, decodeSegment(raw[i] ?? "", roots[i]!), roots[i]!);
    return out;
  };
}

/** A path segment percent-decoded (`%3A` -> `:`). */
function decodeSegment(s: string, param: string): string {
  if (s.indexOf("%") < 0) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    throw invalidInput(param, "malformed percent-encoding");
  }
}

/**
 * Query parameters as the route declares them: each declared name's value decoded (`+` is a
 * space); a declared name given twice is refused; names the route does not declare are ignored.
 * Clients repeat the same few query strings, so each short one is parsed once (the answer is
 * frozen and shared by the requests that send it).
 */
function queryReader(shape: InputShape | undefined): RouteInputs["query"] {
  if (!shape || Object.keys(shape).length === 0) return () => NONE;
  const schema = z.object(shape);
  const names = new Set(Object.keys(shape));
  const fromEmpty = schema.safeParse({});
  const empty = fromEmpty.success ? Object.freeze(fromEmpty.data) : null;
  const seen = new Map<string, Record<string, unknown>>();
  return (raw) => {
    if (raw === "" && empty !== null) return empty;
    const known = seen.get(raw);
    if (known !== undefined) return known;
    const values: Record<string, string> = {};
    if (raw !== "") {
      for (const part of raw.split("&")) {
        const eq = part.indexOf("=");
        const name = eq < 0 ? part : part.slice(0, eq);
        if (!names.has(name)) continue;
        if (Object.hasOwn(values, name)) throw invalidInput(`query.${name}`, "give it once");
        values[name] = decodeQueryValue(eq < 0 ? "" : part.slice(eq + 1), name);
      }
    }
    const out = Object.freeze(validate(schema, values, "query") as Record<string, unknown>);
    if (raw.length <= CACHED_QUERY_CHARS) {
      if (seen.size >= CACHED_QUERIES) seen.clear();
      seen.set(raw, out);
    }
    return out;
  };
}

function decodeQueryValue(s: string, name: string): string {
  if (s.indexOf("%") < 0 && s.indexOf("+") < 0) return s;
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    throw invalidInput(`query.${name}`, "malformed percent-encoding");
  }
}
