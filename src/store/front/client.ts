import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import { threadEntry } from "../../shared/thread-entry.js";
import { TurnBatcher } from "../../shared/turn-batcher.js";
import { PROTOCOL_VERSION, type Ack, type AckBatch, type AckOf, type IntentBatch, type IntentOf, type Op, type WriterData, type WriterMessage, type WriterPort, type WriterReady } from "../protocol.js";

/** Intents sent in one message at most (TurnBatcher). */
const CHUNK = 16;

/** The writer thread's entry (threadEntry). */
const WRITER_ENTRY = threadEntry("../writer/writer-thread.js", import.meta.url);

/**
 * The front's handle on the single writer. `send` queues an intent; the intents queued in one
 * event-loop turn travel in messages of up to CHUNK, and the returned promise settles when the
 * writer's transaction holding it has committed.
 */
export class StoreClient {
  private nextId = 1;
  private pending = new Map<number, (ack: Ack) => void>();
  private readonly outbox = new TurnBatcher<IntentBatch["items"][number]>(CHUNK, (items) => {
    const batch: IntentBatch = { kind: "intents", items };
    this.channel.postMessage(batch);
  });
  private alive = false;
  private exitHandlers: Array<(err: Error) => void> = [];
  /** Runs when acknowledgements arrive, before their promises settle (main: reset read snapshots). */
  afterCommit: (() => void) | undefined;
  /** Receives each writer commit's size and duration (GET /metrics). */
  onCommit: ((commit: AckBatch["commit"]) => void) | undefined;
  /** Highest charge-journal sequence number known at start (the front continues after it). */
  journalSeq = 0;
  /** Journal records the writer replayed at start. */
  replayed = 0;
  /** Highest observation-journal sequence number known at start. */
  observationSeq = 0;
  observationsReplayed = 0;
  /** See WriterReady. */
  metersDiscarded = false;
  metersMigrated = 0;
  budgetsRepaired = 0;
  /** On PostgreSQL: this node's index and the migrations applied at this start (see WriterReady). */
  cluster: WriterReady["cluster"] = null;

  /** Journal sequence numbers per front thread's journal (WriterReady.journals). */
  journals: WriterReady["journals"] = {};

  private constructor(
    private readonly channel: Worker | MessagePort,
    private readonly worker: Worker | null,
  ) {}

  /**
   * Another front thread's client (FS_FRONT_THREADS): over `port`, one end of a channel whose
   * other end main handed to the writer (`connectFront`). Closing it does not stop the writer.
   */
  static overPort(port: MessagePort): StoreClient {
    const client = new StoreClient(port, null);
    client.alive = true;
    port.on("message", (msg: AckBatch) => {
      if (msg.commit.intents > 0) client.onCommit?.(msg.commit);
      client.onAcks(msg.items);
    });
    port.once("close", () => client.die(new Error("store writer port closed")));
    return client;
  }

  /** A new channel to the writer for another front thread: returns the thread's end. */
  connectFront(): MessagePort {
    if (!this.worker) throw new Error("only the writer's own client hands out ports");
    const { port1, port2 } = new MessageChannel();
    this.worker.postMessage({ kind: "port", port: port2 } satisfies WriterPort, [port2]);
    return port1;
  }

  /** Starts the writer thread and resolves once it reports ready. */
  static start(
    stateDir: string,
    journalDir: string,
    opts: Pick<WriterData, "bindingRetentionMs" | "observationRetentionMs" | "logLevel" | "logFormat" | "postgres" | "frontThreads" | "webhooks" | "orgLimits"> = {},
  ): Promise<StoreClient> {
    const data: WriterData = { protocolVersion: PROTOCOL_VERSION, stateDir, journalDir, ...opts };
    const worker = new Worker(WRITER_ENTRY, { workerData: data });
    const client = new StoreClient(worker, worker);
    return new Promise((resolve, reject) => {
      worker.on("message", (msg: WriterMessage) => {
        if (msg.kind === "ready") {
          client.alive = true;
          client.journalSeq = msg.journalSeq;
          client.replayed = msg.replayed;
          client.observationSeq = msg.observationSeq;
          client.observationsReplayed = msg.observationsReplayed;
          client.metersDiscarded = msg.metersDiscarded;
          client.metersMigrated = msg.metersMigrated;
          client.budgetsRepaired = msg.budgetsRepaired;
          client.cluster = msg.cluster;
          client.journals = msg.journals;
          resolve(client);
        } else {
          if (msg.commit.intents > 0) client.onCommit?.(msg.commit);
          client.onAcks(msg.items);
        }
      });
      worker.once("error", (err) => {
        client.die(err);
        reject(err);
      });
      worker.once("exit", (code) => client.die(new Error(`store writer exited with code ${code}`)));
    });
  }

  /** True while the writer thread runs. */
  isAlive(): boolean {
    return this.alive;
  }

  /** Called once if the writer dies; the service cannot keep a ledger without it. */
  onDeath(handler: (err: Error) => void): void {
    this.exitHandlers.push(handler);
  }

  /**
   * Queues an intent; resolves with the writer's typed acknowledgement after its transaction
   * committed (a failure never rejects: it is an AckFailure).
   */
  send<K extends Op>(intent: IntentOf<K>): Promise<AckOf<K>> {
    if (!this.alive) return Promise.resolve({ ok: false, error: "STORE_FAILED", message: "store writer is not running" });
    const id = this.nextId++;
    this.outbox.add({ id, intent: intent as IntentBatch["items"][number]["intent"] });
    // The writer answers an intent with the acknowledgement of its operation (IntentApplier.apply).
    return new Promise((resolve) => this.pending.set(id, resolve as (ack: Ack) => void));
  }

  /**
   * Stops the writer after everything sent so far was acknowledged. `keepLeases`: in a cluster,
   * charges are still waiting to be shipped, so the node's credit leases are not given back.
   */
  async close(keepLeases = false): Promise<void> {
    if (!this.alive) return;
    if (!this.worker) {
      // Another front thread's client: the writer goes on for the others.
      this.alive = false;
      (this.channel as MessagePort).close();
      return;
    }
    await this.send({ op: "shutdown", keepLeases });
    this.alive = false;
    await this.worker.terminate();
  }

  /** Intents sent and not yet acknowledged. */
  get inFlight(): number {
    return this.pending.size;
  }

  private onAcks(items: Array<{ id: number; ack: Ack }>): void {
    // The writer committed before acknowledging: drop any read snapshot older than that commit,
    // so whatever runs on these acks (a disabled key, a new plan) reads what was just written.
    this.afterCommit?.();
    for (const { id, ack } of items) {
      const resolve = this.pending.get(id);
      if (resolve) {
        this.pending.delete(id);
        resolve(ack);
      }
    }
  }

  private die(err: Error): void {
    if (!this.alive && this.pending.size === 0) return;
    const wasAlive = this.alive;
    this.alive = false;
    const failed: Ack = { ok: false, error: "STORE_FAILED", message: "store writer stopped" };
    for (const resolve of this.pending.values()) resolve(failed);
    this.pending.clear();
    if (wasAlive) for (const h of this.exitHandlers) h(err);
  }
}
