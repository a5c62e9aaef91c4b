import { closeSync, readFileSync, readdirSync, truncateSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { ensurePrivateDir, openPrivate, restrictFiles } from "./private-files.js";

/**
 * An append-only journal of records, written by the front thread once per event-loop turn before
 * that turn's answers go out. A write(2) that returned is in the kernel's page cache, so a killed
 * process (kill -9) loses nothing that was answered. The writer thread applies the records to
 * LMDB shortly after, records the last applied sequence number in the same transaction, and on
 * start replays whatever the journal holds beyond it. See docs/architecture.md, "Durability".
 *
 * Two journals use this: debits (charge-journal.ts) and beacon observations (observation-journal.ts).
 */
export interface JournalRecord {
  seq: number;
}

/**
 * The request a record is for, when the record counts only if that request can still be answered
 * (a debit): checked when the batch is written, after the event-loop turn that queued it.
 */
export interface Liveness {
  /** True once the client has left (or its connection was closed); the record is then dropped. */
  readonly aborted: boolean;
}

/** What a dropped record's waiter receives: nothing of it was written. */
export class RecordWithdrawnError extends Error {
  constructor() {
    super("the request left before its record was written");
    this.name = "RecordWithdrawnError";
  }
}

/** How one journal writes and reads its lines. A line never contains a newline. */
export interface JournalCodec<T extends JournalRecord> {
  /** Segment file name prefix, e.g. "charges-". */
  prefix: string;
  /** Name used in errors ("charge journal"). */
  name: string;
  encode(rec: T): string;
  /** Parses one complete line; returns null when it is malformed. */
  decode(line: string): T | null;
}

const SEGMENT_SUFFIX = ".log";
/** Start a new segment past this size, so applied segments can be deleted. */
const SEGMENT_BYTES = 32 * 1024 * 1024;

/** Front-thread side: appends records and hands each written batch on. */
export class AppendJournal<T extends JournalRecord> {
  private fd: number;
  private segmentBytes = 0;
  private nextSeq: number;
  private lines: string[] = [];
  private records: T[] = [];
  private waiters: Array<(err?: Error) => void> = [];
  /** Per queued record, the request it depends on (Liveness), if any; `conditional` counts them. */
  private lives: Array<Liveness | undefined> = [];
  private conditional = 0;
  private writtenSeq: number;
  private scheduled = false;
  private closed = false;

  /** Called with anything a waiter throws (main logs it). */
  onCallbackError: ((err: unknown) => void) | undefined;
  /**
   * The sequence number after `prev`; unset, `prev + 1`. A cluster's observation journal numbers
   * by time and node instead (pg/cluster.ts observationSeqs); it must return more than `prev`.
   */
  seqAfter: ((prev: number) => number) | undefined;

  /**
   * @param dir journal directory
   * @param codec line format and segment prefix
   * @param lastSeq highest sequence number already in the journal (from the writer's replay)
   * @param onWritten receives every batch right after it reached the file, with its lines as written (same order)
   */
  constructor(
    private readonly dir: string,
    private readonly codec: JournalCodec<T>,
    lastSeq: number,
    private readonly onWritten: (records: T[], lines: string[]) => void,
  ) {
    ensurePrivateDir(dir);
    restrictFiles(dir); // segments an older version wrote with looser modes
    this.nextSeq = lastSeq + 1;
    this.writtenSeq = lastSeq;
    this.fd = this.openSegment();
  }

  /**
   * Queues a record (its `seq` is assigned here). `onWritten` runs once the batch holding it
   * reached the journal file, or with an error when that write failed (nothing of it counts then).
   * @throws JournalClosedError after close() (the service is stopping): the caller answers 503.
   */
  appendRecord(fields: Omit<T, "seq">, onWritten: (err?: Error) => void, live?: Liveness): T {
    if (this.closed) throw new JournalClosedError(this.codec.name);
    const seq = this.nextSeqNumber();
    return this.queue({ seq, ...fields } as T, onWritten, live);
  }

  /**
   * appendRecord for a record the caller builds and hands over, `seq` its first property (any
   * number; assigned here): saves copying the fields into a new object, about 0.5 µs for an
   * observation. The record must not be changed afterwards.
   * @throws JournalClosedError after close()
   */
  appendOwned(rec: T, onWritten: (err?: Error) => void): T {
    if (this.closed) throw new JournalClosedError(this.codec.name);
    rec.seq = this.nextSeqNumber();
    return this.queue(rec, onWritten);
  }

  private nextSeqNumber(): number {
    const seq = this.seqAfter ? this.seqAfter(this.nextSeq - 1) : this.nextSeq;
    this.nextSeq = seq + 1;
    return seq;
  }

  /**
   * `live`: the record is written only if `live.aborted` is still false when its batch is
   * written (setImmediate, after the native callback that queued it has returned: uWS reports a
   * client that left, or a connection it closed, before then); otherwise it is dropped and
   * `onWritten` gets a RecordWithdrawnError. Its sequence number is then never written.
   */
  private queue(rec: T, onWritten: (err?: Error) => void, live?: Liveness): T {
    this.records.push(rec);
    this.lines.push(`${this.codec.encode(rec)}\n`);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
    this.waiters.push(onWritten);
    this.lives.push(live);
    if (live) this.conditional++;
    return rec;
  }

  /** Takes the queued batch, without the records whose request has left (their waiters apart). */
  private takeBatch(): { lines: string[]; records: T[]; waiters: Array<(err?: Error) => void>; withdrawn: Array<(err?: Error) => void> } {
    let { lines, records, waiters } = this;
    const lives = this.lives;
    const withdrawn: Array<(err?: Error) => void> = [];
    this.lines = [];
    this.records = [];
    this.waiters = [];
    this.lives = [];
    if (this.conditional > 0) {
      this.conditional = 0;
      if (lives.some((l) => l?.aborted)) {
        const keep = (_: unknown, i: number): boolean => !lives[i]?.aborted;
        for (let i = 0; i < lives.length; i++) if (lives[i]?.aborted) withdrawn.push(waiters[i]!);
        lines = lines.filter(keep);
        records = records.filter(keep);
        waiters = waiters.filter(keep);
      }
    }
    return { lines, records, waiters, withdrawn };
  }

  /** Writes what is queued now (also used at shutdown). */
  flush = (): void => {
    this.scheduled = false;
    if (this.lines.length === 0) return;
    const { lines, records, waiters, withdrawn } = this.takeBatch();
    let failure: Error | undefined;
    if (lines.length > 0) {
      try {
        const buf = Buffer.from(lines.join(""), "utf8");
        writeAll(this.fd, buf);
        this.segmentBytes += buf.length;
      } catch (err) {
        // Disk full or I/O error: the batch is not durable, so none of it is answered as done.
        // A partial line may be on disk; the next start cuts it off (truncateTornTail).
        failure = err instanceof Error ? err : new Error(String(err));
      }
      if (!failure) {
        this.writtenSeq = Math.max(this.writtenSeq, records[records.length - 1]!.seq);
        this.onWritten(records, lines);
      }
    }
    this.notify(waiters, failure);
    if (withdrawn.length > 0) this.notify(withdrawn, new RecordWithdrawnError());
    if (!failure && this.segmentBytes > SEGMENT_BYTES) {
      closeSync(this.fd);
      this.fd = this.openSegment();
    }
  };

  private notify(waiters: Array<(err?: Error) => void>, failure: Error | undefined): void {
    for (const w of waiters) {
      try {
        w(failure);
      } catch (err) {
        // One failing response must not keep the rest of the batch unanswered.
        this.onCallbackError?.(err);
      }
    }
  }

  /** Highest sequence number written to the journal file (a withdrawn record's never is). */
  get lastSeq(): number {
    return this.writtenSeq;
  }

  /** True after close(): the service is stopping and appends throw. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Writes what is queued and closes the file; later appends throw. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    closeSync(this.fd);
  }

  private openSegment(): number {
    this.segmentBytes = 0;
    return openPrivate(join(this.dir, `${this.codec.prefix}${String(this.nextSeq).padStart(16, "0")}${SEGMENT_SUFFIX}`), "a");
  }
}

function writeAll(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

/** Segments of one journal, in order, each with the first sequence number its name promises. */
export function listJournalSegments(dir: string, prefix: string): Array<{ path: string; firstSeq: number }> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith(prefix) && n.endsWith(SEGMENT_SUFFIX))
    .map((n) => ({ path: join(dir, n), firstSeq: Number(n.slice(prefix.length, -SEGMENT_SUFFIX.length)) }))
    .filter((s) => Number.isSafeInteger(s.firstSeq))
    .sort((a, b) => a.firstSeq - b.firstSeq);
}

/**
 * Parses a segment. A torn final line (no newline) is ignored: its write never returned, so no
 * client was answered for it. A malformed complete line is a corrupt journal and throws.
 */
export function readJournalSegment<T extends JournalRecord>(path: string, codec: JournalCodec<T>): T[] {
  const text = readFileSync(path, "utf8");
  const out: T[] = [];
  let start = 0;
  for (;;) {
    const nl = text.indexOf("\n", start);
    if (nl < 0) break;
    const line = text.slice(start, nl);
    start = nl + 1;
    const rec = codec.decode(line);
    if (rec === null) throw new Error(`corrupt ${codec.name} ${path}: line ${JSON.stringify(line.slice(0, 80))}`);
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
export function pruneJournalSegments(dir: string, prefix: string, appliedSeq: number): void {
  const segs = listJournalSegments(dir, prefix);
  for (let i = 0; i + 1 < segs.length; i++) {
    if (segs[i + 1]!.firstSeq - 1 <= appliedSeq) unlinkSync(segs[i]!.path);
  }
}

/** The highest sequence number in a journal's segments; `floor` when there is none higher. */
export function lastJournalSeq<T extends JournalRecord>(dir: string, codec: JournalCodec<T>, floor: number): number {
  let max = floor;
  for (const seg of listJournalSegments(dir, codec.prefix)) {
    const recs = readJournalSegment(seg.path, codec);
    const last = recs[recs.length - 1];
    if (last && last.seq > max) max = last.seq;
  }
  return max;
}

/** append() after close(): the service is shutting down. */
export class JournalClosedError extends Error {
  constructor(name = "charge journal") {
    super(`${name} closed: the service is stopping`);
    this.name = "JournalClosedError";
  }
}
