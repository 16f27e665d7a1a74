import pg from 'pg';

export interface ListenHandlers {
  onNotify(payload: string): void;
  onState(receiving: boolean): void;
}

export interface Listening {
  close(): Promise<void>;
}

const RETRY_MS = [100, 500, 1_000, 5_000];

/**
 * `LISTEN` on a connection of its own (a pooled one would be handed back and the subscription
 * lost with it), reconnecting with back-off when the server goes away. Between a drop and the
 * next successful `LISTEN` the subscriber is told it is not receiving.
 */
export async function listenOnServer(
  url: string,
  channel: string,
  handlers: ListenHandlers,
): Promise<Listening> {
  let closed = false;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;
  let attempt = 0;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url });
    next.on('notification', (message) => {
      if (message.channel === channel) handlers.onNotify(message.payload ?? '');
    });
    const lost = () => {
      if (client !== next) return;
      client = undefined;
      handlers.onState(false);
      next.end().catch(() => {});
      retry();
    };
    next.on('error', lost);
    next.on('end', lost);
    try {
      await next.connect();
      await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      next.end().catch(() => {});
      throw error;
    }
    if (closed) {
      await next.end();
      return;
    }
    client = next;
    attempt = 0;
    handlers.onState(true);
  };

  const retry = () => {
    if (closed) return;
    const delay = RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)];
    attempt += 1;
    timer = setTimeout(() => {
      connect().catch(retry);
    }, delay);
    timer.unref();
  };

  handlers.onState(false);
  await connect().catch(retry);
  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      const current = client;
      client = undefined;
      await current?.end().catch(() => {});
    },
  };
}
