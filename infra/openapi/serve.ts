import { createReadStream } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { type Json, openApiDocument } from './document';
import {
  DOCUMENT_PATH,
  REFERENCE_DOCUMENT_PATH,
  REFERENCE_PATH,
  REFERENCE_SCRIPT_PATH,
  referencePageDocument,
  referencePageHtml,
} from './reference-page';

/** Scalar's standalone browser bundle, from the installed package (a dev dependency, like this server). */
const scalarBundle = () =>
  join(dirname(createRequire(import.meta.url).resolve('@scalar/api-reference')), 'browser/standalone.js');

let document: Promise<Json> | undefined;

/** Built once per process from the route table and the handlers' schemas. */
function baseDocument(): Promise<Json> {
  document ??= openApiDocument().catch((error: unknown) => {
    document = undefined;
    throw error;
  });
  return document;
}

function withServer(doc: Json, req: IncomingMessage): Json {
  const host = req.headers.host;
  return host ? { ...doc, servers: [{ url: `http://${host}`, description: 'This server' }] } : doc;
}

function send(res: ServerResponse, contentType: string, body: string): void {
  res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-cache' });
  res.end(body);
}

/**
 * Local server only: GET /openapi.json (the description), GET /docs (the reference page) and what
 * the page loads. Returns false for any other request.
 */
export async function handleOpenApiRoute(
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
): Promise<boolean> {
  if (req.method !== 'GET') return false;
  switch (pathname) {
    case DOCUMENT_PATH:
      send(res, 'application/json', JSON.stringify(withServer(await baseDocument(), req)));
      return true;
    case REFERENCE_DOCUMENT_PATH:
      send(res, 'application/json', JSON.stringify(referencePageDocument(withServer(await baseDocument(), req))));
      return true;
    case REFERENCE_PATH:
    case `${REFERENCE_PATH}/`:
      send(res, 'text/html; charset=utf-8', referencePageHtml((await baseDocument()).info.title));
      return true;
    case REFERENCE_SCRIPT_PATH:
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'max-age=3600' });
      createReadStream(scalarBundle()).pipe(res);
      return true;
    default:
      return false;
  }
}
