import express from 'express';
import swaggerUi from 'swagger-ui-express';
import type { Dialect } from '../dialects/dialect.js';
import { buildOpenApiDocument } from './openapi.js';

/** Where a dialect's rendered reference lives: `/docs` for the spec's, `/<name>/docs` beside its base path otherwise. */
export const docsPathOf = (dialect: Dialect): string => `${dialect.basePath.replace(/\/v0$/, '')}/docs`;

/**
 * Each dialect's generated OpenAPI 3.1 document at `<basePath>/openapi.json` and its rendered
 * reference at docsPathOf(dialect); no key. Both are built on first request (generation takes a
 * while and most processes never serve them), each page with its own document.
 */
export function createDocsRouter(dialects: readonly Dialect[]): express.Router {
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
      page.use(swaggerUi.serveFiles(documentOnce()), swaggerUi.setup(documentOnce(), { customSiteTitle: dialect.title }));
      return page;
    };
    router.use(docsPathOf(dialect), (req, res, next) => pageOnce()(req, res, next));
  }
  return router;
}
