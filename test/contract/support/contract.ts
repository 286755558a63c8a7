import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Json } from '../../../infra/openapi/document';

const DOCUMENT_ID = 'openapi.json';

/** A JSON pointer segment: `/` and `~` escaped. */
const pointer = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

export interface CheckedResponse {
  status: number;
  /** Lowercased header names. */
  headers: Record<string, string>;
  /** The body text as sent ('' for none). */
  text: string;
}

/**
 * Checks answers against the OpenAPI document with ajv (JSON Schema 2020-12, the dialect of
 * OpenAPI 3.1): the status must be declared for the operation, and the body must match that
 * response's schema (envelope and entity), or be empty where the document declares no content.
 */
export class ContractChecker {
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  readonly operations = new Map<string, { path: string; method: string; operation: Json }>();
  /** operationId -> statuses seen, for coverage reports. */
  readonly seen = new Map<string, Set<number>>();

  constructor(readonly document: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.ajv);
    this.ajv.addSchema(document, DOCUMENT_ID);
    for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
      for (const [method, operation] of Object.entries(item))
        this.operations.set(operation.operationId, { path, method, operation });
    }
  }

  /** The response object of an operation and status (following a components ref), with its JSON pointer. */
  response(operationId: string, status: number): { response: Json; at: string } | undefined {
    const entry = this.operations.get(operationId);
    if (!entry) return undefined;
    const declared = entry.operation.responses[String(status)] as Json | undefined;
    if (!declared) return undefined;
    if (typeof declared.$ref === 'string') {
      const name = declared.$ref.split('/').at(-1)!;
      return { response: this.document.components.responses[name], at: `/components/responses/${pointer(name)}` };
    }
    return { response: declared, at: `/paths/${pointer(entry.path)}/${entry.method}/responses/${status}` };
  }

  private validator(at: string): ValidateFunction {
    let validate = this.validators.get(at);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#${at}/content/${pointer('application/json')}/schema` });
      this.validators.set(at, validate);
    }
    return validate;
  }

  /** The problems of one answer; empty when it matches the document. */
  check(operationId: string, answer: CheckedResponse): string[] {
    const statuses = this.seen.get(operationId) ?? new Set<number>();
    statuses.add(answer.status);
    this.seen.set(operationId, statuses);
    const found = this.response(operationId, answer.status);
    if (!this.operations.has(operationId)) return [`${operationId} is not in the document`];
    if (!found) return [`${operationId} answered ${answer.status}, which the document does not declare`];
    const content = found.response.content as Json | undefined;
    if (!content)
      return answer.text === '' ? [] : [`${operationId} ${answer.status} has a body, but the document declares none`];
    const problems: string[] = [];
    if (!(answer.headers['content-type'] ?? '').startsWith('application/json')) {
      problems.push(
        `${operationId} ${answer.status} content type is ${answer.headers['content-type']}, not application/json`,
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return [...problems, `${operationId} ${answer.status} body is not JSON: ${answer.text.slice(0, 200)}`];
    }
    const validate = this.validator(found.at);
    if (!validate(body)) {
      const errors = (validate.errors ?? [])
        .slice(0, 8)
        .map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
      problems.push(
        `${operationId} ${answer.status} does not match the document: ${errors.join('; ')} in ${answer.text.slice(0, 500)}`,
      );
    }
    return problems;
  }

  /** Like `check`, but throws with every problem. */
  assert(operationId: string, answer: CheckedResponse): void {
    const problems = this.check(operationId, answer);
    if (problems.length > 0) throw new Error(problems.join('\n'));
  }
}
