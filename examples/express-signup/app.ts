/**
 * A signup form protected by @fraudscore/express. Run it against a fraudscore service:
 *   FS_URL=http://localhost:8080 FS_KEY=fs_test_… node dist/examples/express-signup/app.js
 * test/… (packages/express/test) starts it against the real service.
 */
import { pathToFileURL } from "node:url";
import express from "express";
import { protect, type ProtectOptions } from "@fraudscore/express";

/** The app; `fraudscore` says which service and key, and how to protect the form. */
export function createApp(fraudscore: ProtectOptions, trustProxy: boolean | string = false) {
  const app = express();
  // The client address the middleware sends is req.ip: X-Forwarded-For only from trusted proxies.
  app.set("trust proxy", trustProxy);
  app.post("/signup", express.urlencoded({ extended: false }), protect({ fields: ["name", "about"], ...fraudscore }), (req, res) => {
    if (req.fraudscore.decision === "block") {
      res.status(403).json({ ok: false, verdict: req.fraudscore });
      return;
    }
    // ... create the account here; hold a `review` for moderation if you like.
    res.status(201).json({ ok: true, verdict: req.fraudscore });
  });
  return app;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const app = createApp({ baseUrl: process.env.FS_URL ?? "http://localhost:8080", apiKey: process.env.FS_KEY });
  app.listen(Number(process.env.PORT ?? 3000));
}
