import { expect } from 'chai';
import express from 'express';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import request from 'supertest';
import { accessLog, type AccessLogLevel } from '../../server/http/accessLog.js';

/** pino's numeric levels, as written in each JSON line. */
const LEVEL = { debug: 20, info: 30, error: 50 } as const;

/** An app answering 200 at /answered and at /healthz, 404 at /missing and 500 at /broken, with its access lines. */
function appLoggingAt(level?: AccessLogLevel): { app: express.Express; lines: Array<{ level: number; url: string }> } {
  const lines: Array<{ level: number; url: string }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        const entry = JSON.parse(line) as { level: number; req?: { url: string } };
        if (entry.req) lines.push({ level: entry.level, url: entry.req.url });
      }
      done();
    },
  });
  const app = express();
  app.use(accessLog(pino({ level: 'debug' }, sink), level));
  app.get(['/answered', '/healthz'], (_req, res) => void res.send('ok'));
  app.get('/missing', (_req, res) => void res.status(404).send('no'));
  app.get('/broken', (_req, res) => void res.status(500).send('no'));
  return { app, lines };
}

async function levelsOf(level?: AccessLogLevel): Promise<Record<string, number>> {
  const { app, lines } = appLoggingAt(level);
  for (const path of ['/answered', '/healthz', '/missing', '/broken']) await request(app).get(path);
  return Object.fromEntries(lines.map((l) => [l.url, l.level]));
}

describe('access log levels', () => {
  it('by default: an answered request at info, probes at debug, a 4xx at info, a 5xx at error', async () => {
    expect(await levelsOf()).to.deep.equal({
      '/answered': LEVEL.info,
      '/healthz': LEVEL.debug,
      '/missing': LEVEL.info,
      '/broken': LEVEL.error,
    });
  });

  it('as npm start asks (debug): answered requests at debug, a 4xx and a 5xx as before', async () => {
    expect(await levelsOf('debug')).to.deep.equal({
      '/answered': LEVEL.debug,
      '/healthz': LEVEL.debug,
      '/missing': LEVEL.info,
      '/broken': LEVEL.error,
    });
  });
});
