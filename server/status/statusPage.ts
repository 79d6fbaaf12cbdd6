/**
 * The status page at `/`: static HTML, CSS and one script, plus uPlot (a small charting library
 * from npm) served from node_modules, so nothing is fetched from another host and nothing is
 * built. The page reads the keyless, rate-limited `getStatusSummary` endpoint.
 */
import express from 'express';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PUBLIC_DIR = join(dirname(fileURLToPath(import.meta.url)), 'public');
const UPLOT_DIST = dirname(createRequire(import.meta.url).resolve('uplot/dist/uPlot.iife.min.js'));

/** Files change only with a deploy; a short max-age keeps a phone from refetching them on every refresh. */
const STATIC_OPTIONS = { maxAge: '5m', etag: true, index: false } as const;

export function createStatusPage(): express.Router {
  const router = express.Router();
  router.get('/', (_req, res) => {
    res.setHeader('cache-control', 'no-cache');
    res.sendFile(join(PUBLIC_DIR, 'index.html'));
  });
  router.get('/status/uPlot.iife.min.js', (_req, res) => res.sendFile(join(UPLOT_DIST, 'uPlot.iife.min.js'), STATIC_OPTIONS));
  router.get('/status/uPlot.min.css', (_req, res) => res.sendFile(join(UPLOT_DIST, 'uPlot.min.css'), STATIC_OPTIONS));
  // Browsers and tools that ask for /favicon.ico without reading the page's <link rel="icon"> get the same SVG.
  router.get('/favicon.ico', (_req, res) => res.type('image/svg+xml').sendFile(join(PUBLIC_DIR, 'favicon.svg'), STATIC_OPTIONS));
  router.use('/status', express.static(PUBLIC_DIR, STATIC_OPTIONS));
  return router;
}
