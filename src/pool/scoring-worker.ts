/**
 * Entry of each scoring-pool thread. Opens the datasets read-only once, at module load,
 * and dispatches tasks on their `kind`.
 */
import { basename } from "node:path";
import { threadId, workerData } from "node:worker_threads";
import { openIpDatasetDir } from "../datasets/ip-dataset.js";
import { loadContentModel, type ContentAnalysis, type ContentEvidence, type ContentModel } from "../scoring/content/index.js";
import { parseIp } from "../shared/ip.js";
import { PROTOCOL_VERSION, type ScoringResult, type ScoringTask, type ScoringWorkerData } from "./messages.js";

const data = workerData as ScoringWorkerData;
if (data.protocolVersion !== PROTOCOL_VERSION) {
  throw new Error(`scoring worker protocol ${PROTOCOL_VERSION} started with ${data.protocolVersion}`);
}
let ipDatasetDir = data.ipDatasetDir;
let ipDataset = openIpDatasetDir(ipDatasetDir);

/** The content model, loaded by the first content task (a thread that never gets one spares the memory). */
let content: ContentModel | null = null;

/** piscina calls the default export with each task. */
export default function run(task: ScoringTask): ScoringResult {
  if (task.ipDatasetDir !== ipDatasetDir) {
    const next = openIpDatasetDir(task.ipDatasetDir);
    ipDataset.close();
    ipDataset = next;
    ipDatasetDir = task.ipDatasetDir;
  }
  switch (task.kind) {
    case "ping":
      return { kind: "ping", ok: true, threadId, ipDatasetVersion: basename(ipDatasetDir) };
    case "ip.lookupBatch":
      return {
        kind: "ip.lookupBatch",
        ok: true,
        results: task.ips.map((ip) => {
          const parsed = parseIp(ip);
          return parsed ? ipDataset.lookup(parsed) : null;
        }),
        datasetVersion: ipDataset.meta.version,
      };
    case "content.analyzeBatch": {
      content ??= loadContentModel();
      const model = content;
      const want = task.evidence;
      if (!want) return { kind: "content.analyzeBatch", ok: true, results: task.texts.map((t) => model.analyze(t)), modelVersion: model.version };
      const results: ContentAnalysis[] = [];
      const evidence: Array<ContentEvidence | null> = [];
      task.texts.forEach((t, i) => {
        if (!want[i]) {
          results.push(model.analyze(t));
          evidence.push(null);
          return;
        }
        const r = model.analyzeWithEvidence(t);
        results.push(r.analysis);
        evidence.push(r.evidence);
      });
      return { kind: "content.analyzeBatch", ok: true, results, evidence, modelVersion: model.version };
    }
    case "busy": {
      const until = performance.now() + Math.min(task.ms, 10_000);
      while (performance.now() < until);
      return { kind: "busy", ok: true };
    }
  }
}
