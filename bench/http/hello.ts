/**
 * The baseline: a uWebSockets.js hello-world server. Every endpoint's throughput is reported as a
 * ratio to this server measured in the same run. Prints `{"msg":"listening","port":N}` once up.
 *
 * It also serves `POST /floor` (scenario `floor-post`): the least any of our POST endpoints does
 * in uWS, with none of the product's work. The body is read (each chunk copied), decoded and
 * parsed, and the answer, an envelope-sized JSON text with a request id header, is written one
 * event-loop turn later in its own cork, the way the service answers once its journal write or
 * writer commit is done (one setImmediate per turn for every answer waiting, as the journals do).
 */
import { App, us_socket_local_port, type HttpResponse } from "uWebSockets.js";

const port = Number(process.argv[2] ?? 0);
const UTF8 = new TextDecoder("utf-8", { fatal: true });

interface Waiting {
  res: HttpResponse;
  aborted: boolean;
  answer: string;
}
let waiting: Waiting[] = [];
let seq = 0;

function flush(): void {
  const batch = waiting;
  waiting = [];
  for (const w of batch) {
    if (w.aborted) continue;
    w.res.cork(() => {
      w.res.writeHeader("content-type", "application/json").writeHeader("x-request-id", `req_floor${seq}`).end(w.answer);
    });
  }
}

App()
  .get("/*", (res) => {
    res.cork(() => {
      res.writeHeader("content-type", "application/json").end('{"hello":"world"}');
    });
  })
  .post("/floor", (res) => {
    const w: Waiting = { res, aborted: false, answer: "" };
    res.onAborted(() => {
      w.aborted = true;
    });
    const chunks: Buffer[] = [];
    res.onData((chunk, isLast) => {
      chunks.push(Buffer.from(chunk.slice(0)));
      if (!isLast) return;
      const body = JSON.parse(UTF8.decode(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))) as { kind?: unknown };
      seq++;
      w.answer = JSON.stringify({ version: "1", data: { ok: true, kind: body.kind ?? null, id: `obs_${seq}` }, error: null, metadata: { request_id: `req_floor${seq}`, processing_time_ms: 0.012 } });
      if (waiting.length === 0) setImmediate(flush);
      waiting.push(w);
    });
  })
  .listen("127.0.0.1", port, (socket) => {
    if (!socket) {
      process.stderr.write(`cannot listen on ${port}\n`);
      process.exit(1);
    }
    process.stdout.write(JSON.stringify({ msg: "listening", port: us_socket_local_port(socket) }) + "\n");
  });
