import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

/**
 * Runs `npm run bench -- <bench> --serve …args` in a child process and resolves with the URL it
 * prints (`listening <url>`), so the load generator and the server share no event loop.
 */
export async function serveChild(
  bench: string,
  args: string[],
  nodeOptions: string[] = [],
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      ...nodeOptions,
      ...process.execArgv,
      path.join(import.meta.dirname, 'main.ts'),
      bench,
      '--serve',
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      const match = /listening (\S+)/.exec(chunk.toString());
      if (match) resolve(match[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { child, url };
}
