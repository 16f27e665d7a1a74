// A body-check worker that fails on request: a body holding "stall" spins forever (as a parse
// stuck on a pathological input would), one holding "crash" ends its thread with an uncaught
// error; any other body is checked as the real worker checks it.
import { parentPort } from 'node:worker_threads';
import { checkBody } from '../../libs/http/body-check.ts';
import type { BodyJob } from '../../libs/http/body-check.worker.ts';
import type { JsonSchema } from '../../libs/http/json-schema.ts';
import { poolData, type WorkerJob } from '../../libs/http/worker-pool.ts';

const { schemas } = poolData<{ schemas: JsonSchema[] }>();

parentPort?.on('message', ({ id, input }: WorkerJob<BodyJob>) => {
  const text = new TextDecoder().decode(input.body.bytes);
  if (text.includes('stall')) for (;;);
  if (text.includes('crash')) throw new Error('the body-check worker crashed on purpose');
  parentPort?.postMessage({ id, output: checkBody(input.body, schemas[input.schema]) });
});
