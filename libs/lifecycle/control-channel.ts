import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { BackupManifest } from './backup-manifest.ts';
import type { LifecycleProgress } from './embedded-backup.ts';

/**
 * A server holding an embedded data directory listens on this Unix socket inside it, so the
 * CLI started beside it can have work done that only the holder of PGlite and chDB can do
 * (a backup). The socket is the owner's alone (mode 0600 in the owner's directory): reaching
 * it already proves what the master key would, and nothing listens on the network.
 */
export const CONTROL_SOCKET = 'control.sock';

type Message =
  | { progress: { done: number; total: number; what: string } }
  | { done: BackupManifest }
  | { error: string };

export interface ControlHandlers {
  backup(to: string, onProgress: LifecycleProgress): Promise<BackupManifest>;
}

export interface ControlChannel {
  close(): Promise<void>;
}

/** Listens in `dataDir`; undefined when the socket's path is too long for the platform. */
export async function openControlChannel(
  dataDir: string,
  handlers: ControlHandlers,
): Promise<ControlChannel | undefined> {
  const file = path.join(dataDir, CONTROL_SOCKET);
  // Unix socket paths are limited to about 100 bytes.
  if (Buffer.byteLength(file) > 100) return undefined;
  // A socket left by a process that died; this process holds the directory now.
  await fs.rm(file, { force: true });
  let busy = false;
  const server = net.createServer((socket) => {
    let text = '';
    const send = (message: Message) => {
      if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
    };
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      text += chunk.toString('utf8');
      const end = text.indexOf('\n');
      if (end < 0) return;
      socket.removeAllListeners('data');
      void answer(text.slice(0, end)).then((message) => {
        send(message);
        socket.end();
      });
    });
    const answer = async (line: string): Promise<Message> => {
      let request: { command?: unknown; to?: unknown };
      try {
        request = JSON.parse(line);
      } catch {
        return { error: 'The request is not JSON.' };
      }
      if (request.command !== 'backup' || typeof request.to !== 'string') {
        return { error: 'Unknown request: this server answers {"command":"backup","to":DIR}.' };
      }
      if (busy) return { error: 'A backup is already running on this server; try again after it.' };
      busy = true;
      try {
        return { done: await handlers.backup(request.to, (progress) => send({ progress })) };
      } catch (error) {
        return { error: error instanceof Error ? error.message : String(error) };
      } finally {
        busy = false;
      }
    };
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(file, () => resolve());
  });
  await fs.chmod(file, 0o600);
  return {
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await fs.rm(file, { force: true });
    },
  };
}

/** Asks the server holding `dataDir` for a backup into `to`; rejects with its refusal. */
export async function requestBackup(
  dataDir: string,
  to: string,
  onProgress: LifecycleProgress,
): Promise<BackupManifest> {
  const file = path.join(dataDir, CONTROL_SOCKET);
  return new Promise<BackupManifest>((resolve, reject) => {
    const socket = net.createConnection(file);
    let text = '';
    let settled = false;
    const settle = (work: () => void) => {
      if (settled) return;
      settled = true;
      work();
    };
    socket.on('connect', () => socket.write(`${JSON.stringify({ command: 'backup', to })}\n`));
    socket.on('error', (error) =>
      settle(() =>
        reject(
          new Error(
            `The server holding ${dataDir} does not answer on ${file} (${error.message}); is it an older Cairn? Stop it and run the backup again.`,
          ),
        ),
      ),
    );
    socket.on('data', (chunk) => {
      text += chunk.toString('utf8');
      for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n')) {
        const message = JSON.parse(text.slice(0, end)) as Message;
        text = text.slice(end + 1);
        if ('progress' in message) onProgress(message.progress);
        else if ('done' in message) settle(() => resolve(message.done));
        else settle(() => reject(new Error(message.error)));
      }
    });
    socket.on('close', () =>
      settle(() =>
        reject(new Error(`The server holding ${dataDir} closed ${file} without an answer.`)),
      ),
    );
  });
}
