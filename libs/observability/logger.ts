import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger };

/**
 * JSON logs, one object per line, to stdout unless a destination is given (tests capture it).
 * Credentials are redacted wherever a serializer might pick them up.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'cairn' },
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
  return destination ? pino(options, destination) : pino(options);
}
