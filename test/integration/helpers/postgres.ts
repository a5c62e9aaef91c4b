/** The tests' PostgreSQL is the benchmark's: one helper starts a real server for both (bench/lib/postgres.ts). */
export { postgresBinDir, startPostgres, type TestPostgres } from "../../../bench/lib/postgres.js";
