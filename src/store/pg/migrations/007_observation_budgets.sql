-- Issue 39, finding 1: the day's observation budget counts of each org and project
-- (src/store/state-env.ts observationBudgets, key [budget key, UTC day number]), in the key/value
-- layout of the other named databases, so a restart does not reset a budget. The writer adds
-- each observations.apply batch's counts; the front seeds its counters from them.
CREATE TABLE fs_observation_budgets (k bytea PRIMARY KEY, v json, b bytea);
