import { type Logger, pino } from 'pino';

export type { Logger };

/** JSON logs; credentials are redacted wherever a serializer might pick them up. */
export function createLogger(level: string): Logger {
  return pino({
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
  });
}
