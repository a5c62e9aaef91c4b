import type { TestProject } from "vitest/node";
import setupDatasets from "./global-setup.js";
import { startPostgres } from "./helpers/postgres.js";

/**
 * The integration suite again, with every test server on PostgreSQL (FS_STORE=postgres): the
 * dataset of global-setup.ts, plus one real PostgreSQL server for the run, each test server
 * getting a database of its own (helpers/server.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await setupDatasets(project);
  const pg = await startPostgres();
  project.provide("postgresUrl", pg.url());
  return async () => {
    await pg.destroy();
  };
}
