import Ajv2020 from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { routeList } from '../../functions/routes';
import type { Json } from '../../infra/openapi/document';
import { codesOfStatus } from '../../infra/openapi/document';
import { hasInvisibleCharacters } from '../../lib/organizations/name-key';
import { loadContract } from './support/setup';
import { operationsById, resolveSchema } from './support/requests';

/**
 * Issue 31 (7): every rule the service enforces is in the description: the statuses the local
 * server and the cloud edge answer before any handler (405, 413, 414, 431), the organization-name
 * character rule, the attachment-key rule of note imports, and `from` <= `to` on audit events.
 */

let document: Json;

beforeAll(async () => {
  ({ document } = await loadContract());
});

const operationOf = (operationId: string) => operationsById(document).get(operationId)!.operation;
const bodyOf = (operationId: string) =>
  resolveSchema(document, operationOf(operationId).requestBody.content['application/json'].schema);
const patternTester = (schema: Json) => {
  const ajv = new Ajv2020({ strict: false });
  return ajv.compile({ type: 'string', pattern: schema.pattern });
};

describe('statuses answered before any handler', () => {
  const EDGE = { 405: 'MethodNotAllowed', 413: 'PayloadTooLarge', 414: 'UriTooLong', 431: 'HeadersTooLarge' } as const;

  it('are shared responses in the error envelope, each with the codes of its status', () => {
    for (const [status, name] of Object.entries(EDGE)) {
      const response = document.components.responses[name];
      expect(response, name).toBeDefined();
      const [envelope, narrowed] = response.content['application/json'].schema.allOf;
      expect(envelope).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
      expect(narrowed.properties.statusCode).toEqual({ const: Number(status) });
      expect(narrowed.properties.error.properties.code.enum).toEqual(codesOfStatus(Number(status)));
    }
    expect(document.components.responses.MethodNotAllowed.headers.Allow).toBeDefined();
  });

  it('are referenced where they can occur: 405, 414 and 431 everywhere, 413 where a body is read', () => {
    for (const route of routeList) {
      const operation = operationOf(route.operationId);
      const responses = operation.responses as Record<string, Json>;
      for (const status of [405, 414, 431])
        expect(responses[status], `${route.operationId} ${status}`).toEqual({
          $ref: `#/components/responses/${EDGE[status as 405 | 414 | 431]}`,
        });
      if (operation.requestBody)
        expect(responses[413], route.operationId).toEqual({ $ref: '#/components/responses/PayloadTooLarge' });
      else expect(responses[413], route.operationId).toBeUndefined();
    }
  });
});

describe('prototype keys', () => {
  it('are stated as ignored at any depth, like unknown body fields', () => {
    expect(document.info.description).toContain('`__proto__` and `constructor` keys at any depth');
  });
});

describe('the organization-name character rule', () => {
  it.each(['createOrganization', 'updateOrganization'])(
    '%s: the name has a pattern refusing exactly what has invisible characters',
    (operationId) => {
      const name = resolveSchema(document, bodyOf(operationId).properties.name);
      expect(name.pattern).toEqual(expect.any(String));
      expect(name.description).toMatch(/invisible/i);
      const fits = patternTester(name);
      for (const sample of [
        'Acme Law',
        'Müller & Söhne',
        'Ωmega 株式会社',
        'A\u200bB',
        'A\u202eB',
        'A\u00adB',
        'A\u2028B',
        'A\u0007B',
      ]) {
        expect(fits(sample), JSON.stringify(sample)).toBe(!hasInvisibleCharacters(sample));
      }
    },
  );
});

describe("import-notes' attachment key rule", () => {
  it('describes each attachment as a key of the case: cases/{caseId}/..., no empty, . or .. segment', () => {
    const notes = resolveSchema(document, bodyOf('importCaseNotes').properties.notes);
    const note = resolveSchema(document, notes.items);
    const key = resolveSchema(document, resolveSchema(document, note.properties.attachments).items);
    expect(key.description).toMatch(/cases\/\{caseId\}\//);
    const fits = patternTester(key);
    for (const good of ['cases/abc/file.png', 'cases/0190a4e2-0000-7000-8000-000000000000/notes/1/a b.pdf'])
      expect(fits(good), good).toBe(true);
    for (const bad of [
      'other/abc/file',
      'cases/abc/',
      'cases/abc',
      'cases/abc//x',
      'cases/abc/../x',
      'cases/abc/./x',
      'cases/abc/x/..',
    ])
      expect(fits(bad), bad).toBe(false);
  });
});

describe('audit events: from <= to', () => {
  it('says so on both parameters, in words and as x-not-after / x-not-before', () => {
    const parameters = operationOf('listAuditEvents').parameters as Json[];
    const from = parameters.find((p) => p.name === 'from')!;
    const to = parameters.find((p) => p.name === 'to')!;
    expect(from.schema['x-not-after']).toBe('to');
    expect(to.schema['x-not-before']).toBe('from');
    expect(from.description).toMatch(/not after `to`/);
    expect(to.description).toMatch(/not before `from`/);
  });
});
