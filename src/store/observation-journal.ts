import { AppendJournal, type JournalCodec } from "./journal.js";

/** Kinds of beacon hits (a pageview is `page.view`). */
export type ObservationKind = "page.view" | "form.submit";

/**
 * One beacon hit as recorded (the scored observation plus where it came from). Stored by the writer under
 * [project_id, seq]; `seq` is the observation journal's sequence number, so it grows with time
 * across restarts and orders a project's observations.
 */
export interface ObservationRecord {
  seq: number;
  id: string;
  org_id: string;
  project_id: string;
  session_id: string;
  kind: ObservationKind;
  action: string;
  /** Epoch ms when the service received the hit. */
  ts: number;
  score: number;
  decision: "allow" | "review" | "block";
  reasons: string[];
  ua: { browser: string | null; os: string | null; device: string | null; bot_kind: string | null; bot_name: string | null };
  bot_id: string | null;
  bot_operator: string | null;
  bot_verified: boolean | null;
  /** The policy rule that set the decision, if any. */
  policy: { action: "allow" | "block"; rule: string } | null;
  /** Client address as seen by the service (after trusted proxies). */
  ip: string | null;
  /** ISO country of the address, when the datasets know it. */
  country: string | null;
  /** `location.pathname` of the page, as the beacon sent it. */
  page: string | null;
  /** The beacon's hashed fingerprint. */
  fingerprint: string | null;
  token_valid: boolean;
  /** Client automation tells the beacon reported. */
  tells: string[];
}

/** One JSON document per line (JSON.stringify escapes newlines inside strings). */
export const OBSERVATION_CODEC: JournalCodec<ObservationRecord> = {
  prefix: "observations-",
  name: "observation journal",
  encode: (r) => JSON.stringify(r),
  decode(line) {
    try {
      const r = JSON.parse(line) as ObservationRecord;
      return Number.isSafeInteger(r.seq) && typeof r.project_id === "string" && typeof r.id === "string" ? r : null;
    } catch {
      return null;
    }
  },
};

/** Front-thread side of the observation journal: a hit is answered once its line is written. */
export class ObservationJournal extends AppendJournal<ObservationRecord> {
  constructor(dir: string, lastSeq: number, onWritten: (records: ObservationRecord[], lines: string[]) => void) {
    super(dir, OBSERVATION_CODEC, lastSeq, onWritten);
  }
}
