// `npm run dev:cluster -- [--api 2] [--projectors 2]`: the deployment shape on this machine (see
// cluster.ts). Prints `role=<clickhouse|api|projector> url=<…> pid=<n>` for each process as it is
// ready, then `ready`; SIGTERM or SIGINT stops them all and removes what the cluster made.
import { parseArgs } from 'node:util';
import { startCluster } from './cluster.ts';

const { values } = parseArgs({
  options: {
    api: { type: 'string', default: '2' },
    projectors: { type: 'string', default: '2' },
  },
});
const count = (name: string, text: string): number => {
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || n < 0 || n > 16) {
    process.stderr.write(
      `--${name} takes a whole number from 0 to 16, not ${JSON.stringify(text)}\n`,
    );
    process.exit(2);
  }
  return n;
};
const cluster = await startCluster({
  api: count('api', values.api),
  projectors: count('projectors', values.projectors),
  onReady: ({ role, url, pid }) => process.stdout.write(`role=${role} url=${url} pid=${pid}\n`),
});
process.stdout.write('ready\n');
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  cluster.stop().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`stopping the cluster failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
