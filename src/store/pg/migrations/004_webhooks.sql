-- Outbound webhooks (issue 29; src/store/writer/webhooks.ts): endpoints, the outbox, its due
-- index and the delivery log, in the same key/value layout as the other named databases.
CREATE TABLE fs_webhook_endpoints (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_webhook_outbox (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_webhook_due (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_webhook_log (k bytea PRIMARY KEY, v json, b bytea);
