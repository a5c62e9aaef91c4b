/**
 * Command-line client for the admin API: `npm run admin -- <command> [options]`.
 * Talks HTTP to a running service (FS_URL, default http://127.0.0.1:8080) with FS_ADMIN_TOKEN.
 */
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

export const HELP = `Usage: npm run admin -- <command> [options]

Commands:
  orgs list [--limit N] [--cursor C]
  orgs create --name NAME [--plan free|pro|business|enterprise]
  orgs update ORG_ID [--plan PLAN] [--name NAME]
  orgs model-reset ORG_ID --yes                     (forgets the org's own model: scored as a fresh org's)
  projects list ORG_ID [--limit N] [--cursor C]
  projects create ORG_ID --name NAME
  keys list ORG_ID [--limit N] [--cursor C]
  keys create ORG_ID --type secret|publishable [--mode live|test] [--project PROJECT_ID]
              [--scopes sessions,billing] [--expires-at 2027-01-01T00:00:00Z] [--name NAME]
  keys rename KEY_ID --name NAME
  keys disable KEY_ID
  keys enable KEY_ID
  keys roll KEY_ID [--grace SECONDS]                (the old key works SECONDS more; default 86400)
  keys delete KEY_ID --yes                          (for good: the key cannot be enabled again)
  usage adjust ORG_ID --credits N --reason TEXT     (N may be negative)
  usage show ORG_ID [--key SECRET_KEY]              (the admin token, or the org's own key)

Options:
  --url URL       service address (env FS_URL, default http://127.0.0.1:8080)
  --token TOKEN   admin token (env FS_ADMIN_TOKEN)
  --json          print the response envelope as JSON instead of a table
  -h, --help      this text

Prints a list as a table and one record as "field  value" lines (--json: the envelope as the API
sent it). Exits 1 when the service answers with an error (its code and message on stderr), 2 for
bad usage (no command included).`;

interface Call {
  method: string;
  path: string;
  body?: Record<string, unknown>;
  bearer: "admin" | string;
}

/**
 * `--credits -5` as `--credits=-5`: node's parseArgs reads a value that starts with "-" as an
 * option (and refuses it as ambiguous), but a number is what these options mean.
 */
export function joinNegativeNumbers(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    if (arg.startsWith("--") && !arg.includes("=") && next !== undefined && /^-\d+$/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** Turns argv into one API call; throws an Error with a usage message for bad input. */
export function planCall(argv: string[]): Call | "help" {
  const { values, positionals } = parseArgs({
    args: joinNegativeNumbers(argv),
    allowPositionals: true,
    options: {
      name: { type: "string" },
      plan: { type: "string" },
      type: { type: "string" },
      mode: { type: "string" },
      project: { type: "string" },
      scopes: { type: "string" },
      "expires-at": { type: "string" },
      grace: { type: "string" },
      yes: { type: "boolean" },
      credits: { type: "string" },
      reason: { type: "string" },
      key: { type: "string" },
      limit: { type: "string" },
      cursor: { type: "string" },
      url: { type: "string" },
      token: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  if (positionals.length === 0) throw new Error(`no command given\n\n${HELP}`);
  const [group, action, id] = positionals;
  const need = (v: string | undefined, what: string): string => {
    if (!v) throw new Error(`missing ${what}; see --help`);
    // Ids go into URL paths.
    return what.endsWith("_ID") ? encodeURIComponent(v) : v;
  };
  const clean = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  const page = () => {
    const q = new URLSearchParams(clean({ limit: values.limit, cursor: values.cursor }) as Record<string, string>).toString();
    return q ? `?${q}` : "";
  };
  switch (`${group} ${action}`) {
    case "orgs list":
      return { method: "GET", path: `/v1/admin/orgs${page()}`, bearer: "admin" };
    case "projects list":
      return { method: "GET", path: `/v1/admin/orgs/${need(id, "ORG_ID")}/projects${page()}`, bearer: "admin" };
    case "keys list":
      return { method: "GET", path: `/v1/admin/orgs/${need(id, "ORG_ID")}/keys${page()}`, bearer: "admin" };
    case "orgs create":
      return { method: "POST", path: "/v1/admin/orgs", body: clean({ name: need(values.name, "--name"), plan: values.plan }), bearer: "admin" };
    case "orgs update":
      return { method: "PATCH", path: `/v1/admin/orgs/${need(id, "ORG_ID")}`, body: clean({ plan: values.plan, name: values.name }), bearer: "admin" };
    case "orgs model-reset":
      if (!values.yes) throw new Error(`resetting an org's model forgets everything its feedback taught it: add --yes to reset ${id ?? "ORG_ID"}'s`);
      return { method: "POST", path: `/v1/admin/orgs/${need(id, "ORG_ID")}/model/reset`, bearer: "admin" };
    case "projects create":
      return { method: "POST", path: `/v1/admin/orgs/${need(id, "ORG_ID")}/projects`, body: { name: need(values.name, "--name") }, bearer: "admin" };
    case "keys create":
      return {
        method: "POST",
        path: `/v1/admin/orgs/${need(id, "ORG_ID")}/keys`,
        body: clean({
          type: need(values.type, "--type"),
          mode: values.mode,
          project_id: values.project,
          scopes: values.scopes?.split(",").map((s) => s.trim()).filter(Boolean),
          expires_at: values["expires-at"],
          name: values.name,
        }),
        bearer: "admin",
      };
    case "keys rename":
      return { method: "PATCH", path: `/v1/admin/keys/${need(id, "KEY_ID")}`, body: { name: need(values.name, "--name") }, bearer: "admin" };
    case "keys disable":
      return { method: "POST", path: `/v1/admin/keys/${need(id, "KEY_ID")}/disable`, bearer: "admin" };
    case "keys enable":
      return { method: "POST", path: `/v1/admin/keys/${need(id, "KEY_ID")}/enable`, bearer: "admin" };
    case "keys roll": {
      const grace = values.grace === undefined ? undefined : Number(values.grace);
      if (grace !== undefined && !Number.isInteger(grace)) throw new Error("--grace must be a whole number of seconds");
      return { method: "POST", path: `/v1/admin/keys/${need(id, "KEY_ID")}/roll`, body: clean({ grace_seconds: grace }), bearer: "admin" };
    }
    case "keys delete":
      if (!values.yes) throw new Error(`deleting a key cannot be undone (disable it to stop it for now): add --yes to delete ${id ?? "KEY_ID"}`);
      return { method: "DELETE", path: `/v1/admin/keys/${need(id, "KEY_ID")}`, bearer: "admin" };
    case "usage adjust": {
      const credits = Number(need(values.credits, "--credits"));
      if (!Number.isInteger(credits)) throw new Error("--credits must be an integer");
      return { method: "POST", path: `/v1/admin/orgs/${need(id, "ORG_ID")}/usage/adjust`, body: { credits, reason: need(values.reason, "--reason") }, bearer: "admin" };
    }
    case "usage show":
      // With the org's own key (--key) or, without it, the admin token.
      return values.key
        ? { method: "GET", path: `/v1/orgs/${need(id, "ORG_ID")}/usage`, bearer: values.key }
        : { method: "GET", path: `/v1/admin/orgs/${need(id, "ORG_ID")}/usage`, bearer: "admin" };
    default:
      throw new Error(`unknown command '${positionals.join(" ")}'; see --help`);
  }
}

async function main(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  let call: Call | "help";
  try {
    call = planCall(argv);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  if (call === "help") {
    process.stdout.write(HELP + "\n");
    return 0;
  }
  const { values } = parseArgs({ args: joinNegativeNumbers(argv), allowPositionals: true, strict: false });
  const url = String(values.url ?? env.FS_URL ?? "http://127.0.0.1:8080").replace(/\/$/, "");
  const token = call.bearer === "admin" ? String(values.token ?? env.FS_ADMIN_TOKEN ?? "") : call.bearer;
  if (!token) {
    process.stderr.write("no admin token: set FS_ADMIN_TOKEN or pass --token\n");
    return 2;
  }
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (call.body) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(url + call.path, { method: call.method, headers, body: call.body ? JSON.stringify(call.body) : undefined });
  } catch (err) {
    process.stderr.write(`cannot reach ${url}: ${(err as Error).message}\n`);
    return 1;
  }
  const text = await res.text();
  if (values.json) {
    process.stdout.write(text + "\n");
    return res.ok ? 0 : 1;
  }
  let envelope: { data?: unknown; error?: { code: string; message: string } | null };
  try {
    envelope = JSON.parse(text) as typeof envelope;
  } catch {
    process.stderr.write(`the service answered ${res.status} with something that is not JSON:\n${text}\n`);
    return 1;
  }
  if (!res.ok || envelope.error) {
    process.stderr.write(`error ${envelope.error?.code ?? res.status}: ${envelope.error?.message ?? text}\n`);
    return 1;
  }
  process.stdout.write(render(envelope.data) + "\n");
  return 0;
}

/** A cell or value as text: scalars as they are, lists joined, objects as JSON. */
function cell(v: unknown): string {
  if (v === null || v === undefined) return "-";
  if (Array.isArray(v) && v.every((x) => typeof x !== "object" || x === null)) return v.length ? v.join(",") : "-";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

/**
 * What the command prints without --json: a page of a list (`{ items, next_cursor }`) as a table
 * of its scalar fields, with the cursor of the next page under it; one record as aligned
 * "field  value" lines.
 */
export function render(data: unknown): string {
  if (data && typeof data === "object" && Array.isArray((data as { items?: unknown }).items)) {
    const { items, next_cursor } = data as { items: Array<Record<string, unknown>>; next_cursor?: string | null };
    if (items.length === 0) return "(none)";
    const columns = Object.keys(items[0]!).filter((k) => items.some((it) => typeof it[k] !== "object" || it[k] === null || Array.isArray(it[k])));
    const rows = [columns, ...items.map((it) => columns.map((c) => cell(it[c])))];
    const widths = columns.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    const lines = rows.map((r) => r.map((v, i) => v.padEnd(widths[i]!)).join("  ").trimEnd());
    lines.splice(1, 0, widths.map((w) => "-".repeat(w)).join("  "));
    if (next_cursor) lines.push("", `more: --cursor ${next_cursor}`);
    return lines.join("\n");
  }
  if (data && typeof data === "object") {
    const entries = Object.entries(data as Record<string, unknown>);
    const width = Math.max(...entries.map(([k]) => k.length));
    return entries.map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`).join("\n");
  }
  return cell(data);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2), process.env).then((code) => process.exit(code));
}
