import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs with static messages and data in fields. Secrets (API keys, webhook secrets,
 * authorization headers) are redacted wherever they appear in a logged object.
 */
export function createLogger(options: { level: string; name: string }): Logger {
  return pino({
    name: options.name,
    level: options.level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-api-key"]',
        '*.secret',
        '*.apiKey',
        'secret',
        'apiKey',
      ],
      censor: '[redacted]',
    },
  });
}
