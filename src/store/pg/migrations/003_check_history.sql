-- Check history, feedback and per-org models (issue 28; src/store/writer/feedback.ts): the same
-- key/value layout as the other named databases; org models are binary (b).
CREATE TABLE fs_checks (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_check_ids (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_feedback (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_org_learning (k bytea PRIMARY KEY, v json, b bytea);
CREATE TABLE fs_org_models (k bytea PRIMARY KEY, v json, b bytea);
