// Installs ts-hooks.mjs in this process or thread (vitest.config.ts passes it in execArgv, and
// worker threads inherit it).
import { register } from "node:module";

register("./ts-hooks.mjs", import.meta.url);
