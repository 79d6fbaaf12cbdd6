import express from 'express';
import swaggerUi from 'swagger-ui-express';
import { buildOpenApiDocument } from './openapi.js';

/** GET /v0/openapi.json (the generated OpenAPI 3.1 document) and the rendered reference at /docs; no key. */
export function createDocsRouter(): express.Router {
  const router = express.Router();
  let document: ReturnType<typeof buildOpenApiDocument> | undefined;
  const documentOnce = () => (document ??= buildOpenApiDocument());
  router.get('/v0/openapi.json', (_req, res) => {
    res.json(documentOnce());
  });
  let page: express.RequestHandler | undefined;
  router.use('/docs', swaggerUi.serve, (req: express.Request, res: express.Response, next: express.NextFunction) =>
    (page ??= swaggerUi.setup(documentOnce(), { customSiteTitle: 'opscan API v0' }))(req, res, next),
  );
  return router;
}
