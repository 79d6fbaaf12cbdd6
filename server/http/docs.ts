import express from 'express';
import swaggerUi from 'swagger-ui-express';
import type { Dialect } from '../dialects/dialect.js';
import { buildOpenApiDocument } from './openapi.js';

/** Where a dialect's rendered reference lives: `/docs` for the spec's, `/<name>/docs` beside its base path otherwise. */
export const docsPathOf = (dialect: Dialect): string => `${dialect.basePath.replace(/\/v0$/, '')}/docs`;

/** Another OpenAPI document the reference at `/docs` offers beside the spec dialect's (the admin API's). */
export type LinkedDocument = { name: string; url: string };

/**
 * Each dialect's generated OpenAPI 3.1 document at `<basePath>/openapi.json` and its rendered
 * reference at docsPathOf(dialect); no key. Both are built on first request (generation takes a
 * while and most processes never serve them), each page with its own document. The page at `/docs`
 * also offers `linked` documents in its top bar's selector, read by URL like its own.
 */
export function createDocsRouter(dialects: readonly Dialect[], linked: readonly LinkedDocument[] = []): express.Router {
  const router = express.Router();
  for (const dialect of dialects) {
    let document: ReturnType<typeof buildOpenApiDocument> | undefined;
    const documentOnce = () => (document ??= buildOpenApiDocument(dialect));
    router.get(`${dialect.basePath}/openapi.json`, (_req, res) => {
      res.json(documentOnce());
    });
    let page: express.Router | undefined;
    const pageOnce = () => {
      if (page) return page;
      page = express.Router();
      const others = docsPathOf(dialect) === '/docs' ? linked : [];
      if (others.length === 0) {
        page.use(swaggerUi.serveFiles(documentOnce()), swaggerUi.setup(documentOnce(), { customSiteTitle: dialect.title }));
      } else {
        // Swagger UI's `urls`: a selector in the top bar (the explorer), each document read from its URL.
        const options = {
          customSiteTitle: dialect.title,
          explorer: true,
          swaggerOptions: { urls: [{ name: dialect.title, url: `${dialect.basePath}/openapi.json` }, ...others] },
        };
        page.use(swaggerUi.serveFiles(undefined, options), swaggerUi.setup(undefined, options));
      }
      return page;
    };
    router.use(docsPathOf(dialect), (req, res, next) => pageOnce()(req, res, next));
  }
  return router;
}
