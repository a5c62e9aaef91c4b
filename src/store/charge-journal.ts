import { closeSync, mkdirSync, openSync, readFileSync, readdirSync, truncateSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

/**
 * The charge journal: an append-only file of debits, written by the front thread once per
 * event-loop turn before that turn's charged responses go out.
 *
 * Why: waiting for the writer thread's LMDB commit put a cross-thread round trip (~1-2 ms on a
 * busy 2-core machine) in front of every metered response and capped GET /v1/ip at ~0.4 of
 * hello-world; one write(2) per turn costs microseconds. A write(2) that returned is in the
 * kernel's page cache, so a killed process (kill -9) loses nothing that was answered. The writer
 * thread still owns the ledger in LMDB: it applies each batch shortly after, records the last
 * applied sequence number in the same transaction, and on start replays whatever the journal
 * holds beyond it. See README, "Durability".
 */
export interface ChargeRecord {
  seq: number;
  orgId: string;
  credits: number;
  /** YYYYMM of the period the charge belongs to. */
  period: string;
}

const SEGMENT_PREFIX = "charges-";
const SEGMENT_SUFFIX = ".log";
/** Start a new segment past this size, so applied segments can be deleted. */
const SEGMENT_BYTES = 32 * 1024 * 1024;

/** Journal directory under DATA_DIR/state. */
export function journalDirOf(stateDir: string): string {
  return join(stateDir, "journal");
}

/** Front-thread side: appends records and hands each written batch on. */
export class ChargeJournal {
  private fd: number;
  private segmentBytes = 0;
  private nextSeq: number;
  private lines: string[] = [];
  private records: ChargeRecord[] = [];
  private waiters: Array<(err?: Error) => void> = [];
  private scheduled = false;
  private closed = false;

  /**
   * @param dir journal directory
   * @param lastSeq highest sequence number already in the journal (from the writer's replay)
   * @param onWritten receives every batch right after it reached the file
   */
  constructor(
    private readonly dir: string,
    lastSeq: number,
    private readonly onWritten: (records: ChargeRecord[]) => void,
  ) {
    mkdirSync(dir, { recursive: true });
    this.nextSeq = lastSeq + 1;
    this.fd = this.openSegment();
  }

  /**
   * Queues a debit. `onWritten` runs once the batch holding it reached the journal file, or with
   * an error when that write failed (nothing of the batch counts then).
   * @throws Error after close() (the service is stopping): the caller answers 503.
   */
  append(orgId: string, credits: number, period: string, onWritten: (err?: Error) => void): void {
    if (this.closed) throw new JournalClosedError();
    const rec: ChargeRecord = { seq: this.nextSeq++, orgId, credits, period };
    this.records.push(rec);
    this.lines.push(`${rec.seq}\t${orgId}\t${credits}\t${period}\n`);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
    this.waiters.push(onWritten);
  }

  /** Writes what is queued now (also used at shutdown). */
  flush = (): void => {
    this.scheduled = false;
    if (this.lines.length === 0) return;
    const text = this.lines.join("");
    const records = this.records;
    const waiters = this.waiters;
    this.lines = [];
    this.records = [];
    this.waiters = [];
    let failure: Error | undefined;
    try {
      writeAll(this.fd, Buffer.from(text, "utf8"));
      this.segmentBytes += text.length;
    } catch (err) {
      // Disk full or I/O error: the batch is not durable, so none of it is answered as charged.
      // A partial line may be on disk; the next start cuts it off (truncateTornTail).
      failure = err instanceof Error ? err : new Error(String(err));
    }
    if (!failure) this.onWritten(records);
    for (const w of waiters) {
      try {
        w(failure);
      } catch (err) {
        // One failing response must not keep the rest of the batch unanswered.
        this.onCallbackError?.(err);
      }
    }
    if (!failure && this.segmentBytes > SEGMENT_BYTES) {
      closeSync(this.fd);
      this.fd = this.openSegment();
    }
  };

  /** Called with anything a waiter throws (main logs it). */
  onCallbackError: ((err: unknown) => void) | undefined;

  /** Writes what is queued and closes the file; later appends throw. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    closeSync(this.fd);
  }

  private openSegment(): number {
    this.segmentBytes = 0;
    return openSync(join(this.dir, segmentName(this.nextSeq)), "a");
  }
}

function writeAll(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

function segmentName(firstSeq: number): string {
  return `${SEGMENT_PREFIX}${String(firstSeq).padStart(16, "0")}${SEGMENT_SUFFIX}`;
}

/** Segments in order, each with the first sequence number its name promises. */
export function listSegments(dir: string): Array<{ path: string; firstSeq: number }> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith(SEGMENT_PREFIX) && n.endsWith(SEGMENT_SUFFIX))
    .map((n) => ({ path: join(dir, n), firstSeq: Number(n.slice(SEGMENT_PREFIX.length, -SEGMENT_SUFFIX.length)) }))
    .filter((s) => Number.isSafeInteger(s.firstSeq))
    .sort((a, b) => a.firstSeq - b.firstSeq);
}

/**
 * Parses a segment. A torn final line (no newline) is ignored: its write never returned, so no
 * client was answered for it. A malformed complete line is a corrupt journal and throws.
 */
export function readSegment(path: string): ChargeRecord[] {
  const text = readFileSync(path, "utf8");
  const out: ChargeRecord[] = [];
  let start = 0;
  for (;;) {
    const nl = text.indexOf("\n", start);
    if (nl < 0) break;
    const line = text.slice(start, nl);
    start = nl + 1;
    const [seq, orgId, credits, period] = line.split("\t");
    const rec = { seq: Number(seq), orgId: orgId ?? "", credits: Number(credits), period: period ?? "" };
    if (!Number.isSafeInteger(rec.seq) || !rec.orgId || !Number.isSafeInteger(rec.credits) || !/^\d{6}$/.test(rec.period)) {
      throw new Error(`corrupt charge journal ${path}: line ${JSON.stringify(line.slice(0, 80))}`);
    }
    out.push(rec);
  }
  return out;
}

/**
 * Cuts a segment back to its last complete line. A write(2) cut short by a crash leaves a torn
 * tail; nobody was answered for it, and appending after it would glue the next line onto it.
 * @returns bytes removed
 */
export function truncateTornTail(path: string): number {
  const buf = readFileSync(path);
  const end = buf.lastIndexOf(0x0a) + 1;
  if (end === buf.length) return 0;
  truncateSync(path, end);
  return buf.length - end;
}

/** Deletes segments whose every record is at or below `appliedSeq`; never the newest. */
export function pruneSegments(dir: string, appliedSeq: number): void {
  const segs = listSegments(dir);
  for (let i = 0; i + 1 < segs.length; i++) {
    if (segs[i + 1]!.firstSeq - 1 <= appliedSeq) unlinkSync(segs[i]!.path);
  }
}

/** append() after close(): the service is shutting down. */
export class JournalClosedError extends Error {
  constructor() {
    super("charge journal closed: the service is stopping");
    this.name = "JournalClosedError";
  }
}
