import {
  buildOpenApiDocument,
  type Json,
  loadRouteDefinitions,
  type RouteWithSchemas,
} from '../../../infra/openapi/document';
import { ContractChecker } from './contract';

/** What the contract tests share: the document built from every handler of the route table, its checker, and each operation's definition. */
export interface Contract {
  document: Json;
  checker: ContractChecker;
  definitions: Map<string, RouteWithSchemas>;
}

export async function loadContract(): Promise<Contract> {
  const loaded = await loadRouteDefinitions();
  const document = buildOpenApiDocument(loaded);
  return {
    document,
    checker: new ContractChecker(document),
    definitions: new Map(loaded.map((definition) => [definition.route.operationId, definition])),
  };
}

/**
 * Client addresses under `prefix` (a /16 such as '198.18'), a new one per call: each suite uses
 * its own range, so the per-IP rate limits never couple one request to another.
 */
export function ipSequence(prefix: string): () => string {
  let counter = 0;
  return () => {
    counter += 1;
    return `${prefix}.${Math.floor(counter / 250) % 250}.${(counter % 250) + 1}`;
  };
}
