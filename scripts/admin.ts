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
  projects list ORG_ID [--limit N] [--cursor C]
  projects create ORG_ID --name NAME
  keys list ORG_ID [--limit N] [--cursor C]
  keys create ORG_ID --type secret|publishable [--project PROJECT_ID]
              [--scopes sessions,billing] [--expires-at 2027-01-01T00:00:00Z]
  keys disable KEY_ID
  usage adjust ORG_ID --credits N --reason TEXT     (N may be negative)
  usage show ORG_ID --key SECRET_KEY                (uses the org's own key)

Options:
  --url URL       service address (env FS_URL, default http://127.0.0.1:8080)
  --token TOKEN   admin token (env FS_ADMIN_TOKEN)
  -h, --help      this text

Prints the response envelope as JSON; exits 1 when the service answers with an error.`;

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
      project: { type: "string" },
      scopes: { type: "string" },
      "expires-at": { type: "string" },
      credits: { type: "string" },
      reason: { type: "string" },
      key: { type: "string" },
      limit: { type: "string" },
      cursor: { type: "string" },
      url: { type: "string" },
      token: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help || positionals.length === 0) return "help";
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
    case "projects create":
      return { method: "POST", path: `/v1/admin/orgs/${need(id, "ORG_ID")}/projects`, body: { name: need(values.name, "--name") }, bearer: "admin" };
    case "keys create":
      return {
        method: "POST",
        path: `/v1/admin/orgs/${need(id, "ORG_ID")}/keys`,
        body: clean({
          type: need(values.type, "--type"),
          project_id: values.project,
          scopes: values.scopes?.split(",").map((s) => s.trim()).filter(Boolean),
          expires_at: values["expires-at"],
        }),
        bearer: "admin",
      };
    case "keys disable":
      return { method: "POST", path: `/v1/admin/keys/${need(id, "KEY_ID")}/disable`, bearer: "admin" };
    case "usage adjust": {
      const credits = Number(need(values.credits, "--credits"));
      if (!Number.isInteger(credits)) throw new Error("--credits must be an integer");
      return { method: "POST", path: `/v1/admin/orgs/${need(id, "ORG_ID")}/usage/adjust`, body: { credits, reason: need(values.reason, "--reason") }, bearer: "admin" };
    }
    case "usage show":
      return { method: "GET", path: `/v1/orgs/${need(id, "ORG_ID")}/usage`, bearer: need(values.key, "--key") };
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
  process.stdout.write(text + "\n");
  return res.ok ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2), process.env).then((code) => process.exit(code));
}
