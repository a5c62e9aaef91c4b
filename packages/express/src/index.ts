/**
 * @fraudscore/express: protect a form or signup route of an Express app. The middleware reads the
 * parsed form (put a body parser before it), the client address as Express gives it (`req.ip`,
 * which honours the app's `trust proxy` setting) and the User-Agent, asks fraudscore, and puts
 * the verdict on `req.fraudscore`; the route decides what to do with it.
 *
 * @example
 * app.post("/signup", express.urlencoded({ extended: false }), protect({ baseUrl, apiKey, fields: ["name"] }), (req, res) => {
 *   if (req.fraudscore.decision === "block") return res.status(403).send("Refused");
 *   // ... create the account
 * });
 */
import { createProtector, type ProtectOptions, type Verdict } from "@fraudscore/client";
import type { NextFunction, Request, RequestHandler, Response } from "express";

export type { ProtectOptions, Verdict } from "@fraudscore/client";

declare module "express-serve-static-core" {
  interface Request {
    /** The verdict of @fraudscore/express's `protect` on this request. */
    fraudscore: Verdict;
  }
}

/**
 * Middleware that scores the submission and sets `req.fraudscore`. It never answers by itself and
 * never fails the request: when the service cannot decide, `onError` chooses the verdict.
 * @param options the service, the key and what to read (ProtectOptions)
 */
export function protect(options: ProtectOptions): RequestHandler {
  const judge = createProtector(options);
  return (req: Request, _res: Response, next: NextFunction) => {
    judge({ body: req.body as Record<string, unknown> | undefined, ip: req.ip, userAgent: req.get("user-agent") }).then((verdict) => {
      req.fraudscore = verdict;
      next();
    }, next);
  };
}
