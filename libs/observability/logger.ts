import { type DestinationStream, type Logger, pino } from 'pino';
import pretty from 'pino-pretty';
import { activeTraceIds } from '../tracing/tracing.ts';

export type { Logger };

/**
 * One JSON object per line for log collectors; on a terminal, the same records made readable
 * (pino-pretty, synchronously, so they never interleave with what the server prints itself).
 * A destination given by the caller (tests capture lines) always gets JSON.
 * Credentials are redacted wherever a serializer might pick them up. While a sampled span is
 * active each line names its `trace_id` and `span_id`, so a line leads to its trace.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'cairn' },
    mixin: () => activeTraceIds() ?? {},
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["idempotency-key"]',
        '*.token',
        '*.masterKey',
      ],
      censor: '[redacted]',
    },
  };
  if (destination) return pino(options, destination);
  if (process.stdout.isTTY) {
    return pino(
      options,
      pretty({
        sync: true,
        colorize: true,
        ignore: 'pid,hostname,service',
        translateTime: 'SYS:HH:MM:ss.l',
      }),
    );
  }
  return pino(options);
}
