// A worker thread of the body-check pool (see body-check-pool.ts): parses and validates large bodies
// so the megabyte never touches the event loop that answers every other request.
import os from 'node:os';
import { parentPort } from 'node:worker_threads';
import { checkBody, type RawBody } from './body-check.ts';
import type { JsonSchema } from './json-schema.ts';
import { poolData, type WorkerJob, type WorkerReply } from './worker-pool.ts';

const BELOW_NORMAL = 10;

export interface BodyJob {
  body: RawBody;
  /** Index into the schemas the pool was started with; -1 when the route has no body schema. */
  schema: number;
}

const { schemas } = poolData<{ schemas: JsonSchema[] }>();

// This thread only (Linux applies a thread's own priority to itself): when clients' megabytes
// keep it busy, the event loop still gets a core first. Raising one's niceness needs no privilege;
// where it is refused the thread simply runs at the usual priority.
try {
  os.setPriority(BELOW_NORMAL);
} catch {}

parentPort?.on('message', ({ id, input }: WorkerJob<BodyJob>) => {
  let reply: WorkerReply;
  try {
    reply = { id, output: checkBody(input.body, schemas[input.schema]) };
  } catch (error) {
    reply = { id, failure: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(reply);
});
