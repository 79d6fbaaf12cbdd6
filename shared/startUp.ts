import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError } from './errors.js';
import type { Logger } from './log.js';

/**
 * What every process (web, indexer, dispatcher, `npm start`, migrate, the CLI) does before it reads
 * its configuration: `.env` in the working directory is read into the environment, where a variable
 * already set wins, and until start-up is over a failure to start (a bad variable, an unmigrated or
 * unreachable database, a port in use) ends the process with one line on stderr and exit code 1,
 * not an uncaught stack: the operator needs the reason, not where in the code it was found.
 */

export type EnvFile = {
  path: string;
  /** Variables `.env` set. */
  loaded: string[];
  /** Variables `.env` names that the environment had already set: the environment's value stands. */
  keptFromEnvironment: string[];
};

/** Reads `dir/.env` into process.env (Node's own parser); null when there is none. */
export function loadEnvFile(dir = process.cwd()): EnvFile | null {
  const file = path.join(dir, '.env');
  if (!existsSync(file)) return null;
  const names = Object.keys(parseEnv(readFileSync(file, 'utf8')));
  const keptFromEnvironment = names.filter((name) => Object.hasOwn(process.env, name));
  process.loadEnvFile(file);
  return { path: file, loaded: names.filter((name) => !keptFromEnvironment.includes(name)), keptFromEnvironment };
}

/** An error as one line: each bad variable of a ConfigError, or the message with its line breaks folded. */
export function oneLineReason(error: unknown): string {
  if (error instanceof ConfigError) return `invalid configuration: ${error.problems.join('; ')}`;
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s*\n\s*/g, ' ');
}

export type StartUp = {
  readonly envFile: EnvFile | null;
  /** Says which variables `.env` set and which the environment kept (names only: values may be secrets). */
  logEnvFile(log: Logger): void;
  /** Start-up is over: a later uncaught error is a fault of the running process, reported with its stack. */
  done(): void;
};

/**
 * Begins a process's start-up: loads `.env`, and until `done()` turns an uncaught error or rejected
 * top-level await into `<name> cannot start: <reason>` on stderr and exit code 1 (with LOG_LEVEL
 * debug or trace the stack follows, for a fault in opscan itself).
 */
export function beginStartUp(name: string): StartUp {
  const failed = (error: unknown) => {
    process.stderr.write(`${name} cannot start: ${oneLineReason(error)}\n`);
    if (/^(debug|trace)$/.test(process.env.LOG_LEVEL ?? '') && error instanceof Error) process.stderr.write(`${error.stack}\n`);
    process.exit(1);
  };
  process.on('uncaughtException', failed);
  const envFile = loadEnvFile();
  return {
    envFile,
    logEnvFile(log) {
      if (envFile) log.info({ path: envFile.path, loaded: envFile.loaded, keptFromEnvironment: envFile.keptFromEnvironment }, 'read .env');
    },
    done() {
      process.off('uncaughtException', failed);
    },
  };
}
