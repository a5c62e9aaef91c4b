import pg from "pg";
import type { Statement } from "./sync-protocol.js";

/**
 * Statements as the text of one simple query, so that a whole transaction (BEGIN, its writes,
 * COMMIT) travels in one message and costs one round trip: `pg` sends a parameterised query only
 * after the previous one answered. Parameters are written in as SQL literals.
 */
export function scriptOf(statements: readonly Statement[]): string {
  if (statements.length === 1) return render(statements[0]!);
  return statements.map(render).join(";\n");
}

function render(s: Statement): string {
  if (!s.params || s.params.length === 0) return s.sql;
  const params = s.params;
  return s.sql.replace(/\$(\d+)/g, (_, n: string) => {
    const i = Number(n) - 1;
    if (i < 0 || i >= params.length) throw new Error(`statement refers to $${n}, given ${params.length} parameters`);
    return literal(params[i]);
  });
}

/** A value as a SQL literal. */
export function literal(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new Error(`not a finite number: ${v}`);
    return String(v);
  }
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "boolean") return v ? "TRUE" : "FALSE";
  if (typeof v === "string") return pg.escapeLiteral(v);
  if (Buffer.isBuffer(v)) return `'\\x${v.toString("hex")}'::bytea`;
  if (Array.isArray(v)) return v.length === 0 ? "'{}'" : `ARRAY[${v.map(literal).join(",")}]`;
  return pg.escapeLiteral(JSON.stringify(v));
}
