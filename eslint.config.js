// @ts-check
/**
 * ESLint for the whole tree (`npm run lint`, run by .ci/run): typescript-eslint's recommended rules
 * and import cycles (eslint-plugin-import-x). Rules the current code breaks wholesale are off, each
 * with the reason; a rule is turned on once the tree passes it. Formatting is Prettier's job
 * (CONTRIBUTING.md), not ESLint's.
 */
import js from "@eslint/js";
import importX, { createNodeResolver } from "eslint-plugin-import-x";
import tseslint from "typescript-eslint";
import { fileURLToPath } from "node:url";

/** Thread folders of src/ a lower layer must not import (the "may import" column of docs/architecture.md). */
const THREADS = ["./src/front", "./src/http", "./src/dashboard", "./src/pool", "./src/main.ts"];
const LAYOUT_ZONES = [
  { target: "./src/shared", from: "./src", except: ["./shared"], message: "src/shared/ is what every thread imports: it imports nothing else of src/." },
  ...["./src/config", "./src/scoring", "./src/datasets"].map((target) => ({
    target,
    from: THREADS,
    message: "config, scoring and datasets run on any thread: they import no thread folder (front, http, dashboard, pool).",
  })),
  ...["./src/config", "./src/scoring", "./src/datasets"].map((target) => ({
    target,
    from: "./src/store",
    except: ["./records.ts"],
    message: "config, scoring and datasets run on any thread: of the store, only its record types (store/records.ts).",
  })),
  { target: "./src/store", from: THREADS, message: "src/store/ runs on the front and the writer: it imports no thread folder (front, http, dashboard, pool)." },
  {
    target: ["./src/store/front", "./src/front", "./src/http", "./src/dashboard"],
    from: "./src/store/writer",
    message: "The writer thread's code (src/store/writer/) is not imported by front-thread code.",
  },
  {
    target: "./src/pool",
    from: ["./src/front", "./src/http", "./src/dashboard", "./src/store"],
    message: "The scoring pool's threads import scoring, datasets, shared and config only.",
  },
  {
    target: ["./src/front", "./src/http", "./src/dashboard"],
    from: "./src/pool",
    except: ["./messages.ts"],
    message: "The front reaches the pool's threads through its client (front/scoring-pool.ts) and their messages only.",
  },
];

export default tseslint.config(
  {
    ignores: [
      "dist/",
      "packages/*/dist/",
      "node_modules/",
      "data/",
      "bench/results/",
      "beacon/dist/",
      "coverage/",
      "examples/next-signup/.next/",
      "examples/next-signup/next-env.d.ts",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts", "**/*.js", "**/*.mjs"],
    plugins: { "import-x": importX },
    languageOptions: { ecmaVersion: 2023, sourceType: "module", globals: { process: "readonly", console: "readonly", Buffer: "readonly", URL: "readonly" } },
    // Sources import each other as ".js" (NodeNext): resolved to the ".ts" beside it.
    settings: {
      "import-x/parsers": importX.flatConfigs.typescript.settings["import-x/parsers"],
      "import-x/extensions": importX.flatConfigs.typescript.settings["import-x/extensions"],
      "import-x/resolver-next": [createNodeResolver({ extensionAlias: { ".js": [".ts", ".js"] } })],
    },
    rules: {
      // No import cycles: a module and what it imports form a tree (issue 27). No exemptions.
      "import-x/no-cycle": ["error", { ignoreExternal: true }],
      // The folder names the thread (docs/architecture.md, "Source layout"): what a folder may
      // import. test/unit/layout-lint.test.ts checks that these zones stay on.
      "import-x/no-restricted-paths": ["error", { zones: LAYOUT_ZONES, basePath: fileURLToPath(new URL(".", import.meta.url)) }],
      "import-x/no-self-import": "error",
      "import-x/no-duplicates": "error",
      // Off: tests and integration helpers type fetched JSON loosely on purpose (helpers/server.ts ApiResponse).
      "@typescript-eslint/no-explicit-any": "off",
      // Unused names starting with "_" are deliberate (an argument a signature needs).
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      // Node's globals come from @types/node; tsc checks undefined names better than this rule.
      "no-undef": "off",
      // `{}` means "no more fields" in the writer protocol's acknowledgement types (store/protocol.ts).
      "@typescript-eslint/no-empty-object-type": ["error", { allowObjectTypes: "always" }],
      // Off: text sanitisers match control characters on purpose (shared/text.ts, email and list parsers).
      "no-control-regex": "off",
      // Off for now (7 throws that wrap a caught error name it in their message): to be turned on
      // with `{ cause }` added where a wrapped error is rethrown.
      "preserve-caught-error": "off",
      // A destructuring where one name is reassigned stays one `let`.
      "prefer-const": ["error", { destructuring: "all" }],
      // Off: it flags loop-state writes in the hand-written parsers (shared/ip.ts, the CSV
      // splitter) that keep each branch's state explicit; tsc's flow analysis covers real misuse.
      "no-useless-assignment": "off",
    },
  },
);
