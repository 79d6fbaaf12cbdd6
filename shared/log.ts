import { pino, type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';

export type { Logger };

/** `auto`: human-readable on a terminal, JSON otherwise (log drains, files, pipes). */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * Wherever they appear in a logged object: API keys, webhook signing secrets, authorization
 * headers and cookies (access logs carry request headers). Query strings are dropped from access
 * logs separately (server/http/accessLog.ts), as a key may be sent in one.
 */
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'req.headers["webhook-signature"]',
  'res.headers["set-cookie"]',
  '*.secret',
  '*.signingSecret',
  '*.apiKey',
  'secret',
  'signingSecret',
  'apiKey',
];

/**
 * Lines that stay at the bottom of the terminal below the scrolling logs (the backfill progress
 * bars): each log line is written above them and they are drawn again. Exists only when logs go
 * to a terminal in the human-readable format.
 */
export class LiveLines {
  private readonly lines = new Map<string, string>();
  private drawn = 0;

  constructor(private readonly out: NodeJS.WriteStream) {}

  set(key: string, line: string): void {
    this.lines.set(key, line);
    this.redraw();
  }

  delete(key: string): void {
    if (!this.lines.delete(key)) return;
    this.redraw();
  }

  /** Writes `text` (whole lines) above the live lines. */
  write(text: string): void {
    this.out.write(this.erase() + text + this.render());
  }

  private redraw(): void {
    this.out.write(this.erase() + this.render());
  }

  /** Cursor up over the lines drawn last time, and clear to the end of the screen. */
  private erase(): string {
    const up = this.drawn > 0 ? `\x1b[${this.drawn}F\x1b[J` : '';
    this.drawn = 0;
    return up;
  }

  private render(): string {
    const width = Math.max(20, (this.out.columns || 100) - 1);
    const lines = [...this.lines.values()].map((l) => (l.length > width ? l.slice(0, width) : l));
    this.drawn = lines.length;
    return lines.map((l) => `${l}\n`).join('');
  }
}

let liveLines: LiveLines | null = null;

/** The live lines of this process's terminal, or null when logs are JSON or not on a terminal. */
export function terminalLiveLines(): LiveLines | null {
  return liveLines;
}

/** Whether `format` means human-readable output here (auto: stdout is a terminal). */
export function isPretty(format: LogFormat = 'auto'): boolean {
  return format === 'pretty' || (format === 'auto' && Boolean(process.stdout.isTTY));
}

/**
 * Logs with static messages and data in fields: JSON lines (for log drains) unless `format` asks
 * for, or `auto` finds a terminal for, pino-pretty's readable lines. Secrets are redacted in both.
 */
export function createLogger(options: { level: string; name: string; format?: LogFormat }): Logger {
  const settings = { name: options.name, level: options.level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  // Without a format (tests, tools) logs are JSON: only the processes read LOG_FORMAT.
  if (!isPretty(options.format ?? 'json')) return pino(settings);
  const pretty = prettyFactory({
    colorize: Boolean(process.stdout.isTTY),
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname',
    singleLine: true,
  });
  liveLines ??= new LiveLines(process.stdout);
  const lines = liveLines;
  // Synchronous, so nothing logged is lost when the process exits right after (Ctrl-C).
  return pino(settings, { write: (json: string) => lines.write(pretty(json)) });
}
