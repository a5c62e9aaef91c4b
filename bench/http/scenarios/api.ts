import type { ServerHandle } from "./types.js";

/** One JSON call to a running server during a scenario's setup or check; returns `data`. */
export async function call(server: ServerHandle, method: string, path: string, token: string, body?: unknown): Promise<any> {
  const res = await fetch(server.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as { data?: unknown };
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}
