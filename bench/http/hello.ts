/**
 * The baseline: a uWebSockets.js hello-world server. Every endpoint's throughput is reported as a
 * ratio to this server measured in the same run. Prints `{"msg":"listening","port":N}` once up.
 */
import { App, us_socket_local_port } from "uWebSockets.js";

const port = Number(process.argv[2] ?? 0);
App()
  .get("/*", (res) => {
    res.cork(() => {
      res.writeHeader("content-type", "application/json").end('{"hello":"world"}');
    });
  })
  .listen("127.0.0.1", port, (socket) => {
    if (!socket) {
      process.stderr.write(`cannot listen on ${port}\n`);
      process.exit(1);
    }
    process.stdout.write(JSON.stringify({ msg: "listening", port: us_socket_local_port(socket) }) + "\n");
  });
