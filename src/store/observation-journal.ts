import { AppendJournal, type JournalCodec } from "./journal.js";
import type { ObservationRecord } from "./records.js";

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
