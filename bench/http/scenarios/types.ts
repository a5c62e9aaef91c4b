/** The shape every HTTP scenario module exports; bench/http/runner.ts runs them all. */

/** Which process answers a scenario: the uWS hello-world baseline or the real service. */
export type ServerName = "hello" | "service";

/** A running server as a scenario's setup sees it. */
export interface ServerHandle {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  /** Bearer token of the admin API (the service only; empty for hello-world). */
  adminToken: string;
}

/** The requests one scenario fires: every connection goes round `paths` with the same headers. */
export interface Prepared {
  paths: string[];
  headers: Record<string, string>;
  /** Default GET. */
  method?: "GET" | "POST";
  /** Request bodies, one per path (same index), for POST scenarios. */
  bodies?: string[];
  /**
   * Optional check once every run is over. `expectedResponses`: responses with the expected status
   * counted by the runner (verification, warm-up and measured runs); `inFlight`: how many more the
   * server may have answered unseen (connections x runs, cut off when each run stopped).
   * Returns whether it held and a line for the report saying what was checked.
   */
  afterRuns?(expectedResponses: number, inFlight: number): Promise<{ ok: boolean; line: string }>;
}

/** One HTTP scenario: a name, the server it targets, its setup and how a correct answer looks. */
export interface Scenario {
  name: string;
  server: ServerName;
  /** Throughput target as a fraction of hello-world's req/s under the same generator; absent = none. */
  target?: number;
  /** Target service CPU per response, µs (all threads, under wrk); absent = none. */
  cpuTarget?: number;
  /** The status every response must have. */
  expectedStatus: number;
  /** Creates whatever the requests need (orgs, keys) and returns them. */
  setup(server: ServerHandle): Promise<Prepared>;
  /** Checks one parsed response body of `path`; returns the problem, or null when it is right. */
  check(path: string, body: unknown): string | null;
}
