import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { HttpResult } from './http-result.ts';

const DOC_ID = 'openapi.json';
const pointer = (...parts: string[]) =>
  parts.map((part) => `/${part.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

/**
 * Paths the API document leaves out on purpose, so their answers are not checked against it:
 * the content-hashed files of the browser pages (CSS, scripts, fonts), whose names change with
 * every build and which are not part of the API.
 */
export const UNDOCUMENTED_PREFIXES = ['/docs/assets/', '/explore/assets/'] as const;

/**
 * What the service may answer for a method and path the document has no operation for (an
 * unknown route or API version, a method a path does not take): the catch-all 404 and 405,
 * and what runs before routing (401 for a refused token, 429, 400 for a broken path). Each
 * is a problem valid under the document's `Problem` schema.
 */
export const UNROUTED_STATUSES = [400, 401, 404, 405, 429] as const;

/**
 * A CORS preflight granted to a listed origin (OPTIONS answered 204 with
 * Access-Control-Allow-Methods) belongs to the Fetch standard's protocol, not to an operation
 * of the API, so the document does not describe it. A refused one is an unrouted 405, checked.
 */
export const isGrantedPreflight = (method: string, res: HttpResult): boolean =>
  method.toUpperCase() === 'OPTIONS' &&
  res.status === 204 &&
  res.headers.get('access-control-allow-methods') !== null;

const PROBLEM_JSON = 'application/problem+json';

/**
 * Checks live responses against an OpenAPI 3.1 document: the response's status must be
 * documented for the operation, its media type listed, its body valid against that schema
 * (and, for a `+json` type, against the `application/json` entry too)
 * (component `$ref`s resolved inside the document), and documented headers well-formed.
 */
export function openApiValidator(doc: any) {
  // strict off: the document carries OpenAPI keywords (paths, info…) Ajv does not know.
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  ajv.addSchema(doc, DOC_ID);
  const compiled = new Map<string, ValidateFunction>();
  const validatorAt = (at: string) => {
    let validate = compiled.get(at);
    if (!validate) {
      validate = ajv.compile({ $ref: at });
      compiled.set(at, validate);
    }
    return validate;
  };

  const follow = (node: any, base: string): [any, string] => {
    if (typeof node?.$ref !== 'string') return [node, base];
    const ref = node.$ref.slice(1) as string;
    const target = ref
      .split('/')
      .slice(1)
      .reduce((at: any, key: string) => at?.[key], doc);
    return [target, ref];
  };

  const mediaType = (res: HttpResult) =>
    (res.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

  const expectBody = (
    label: string,
    type: string,
    at: string,
    res: HttpResult,
    contentType: string,
  ) => {
    const validate = validatorAt(`${DOC_ID}#${at}`);
    const body = /[/+]json$/.test(contentType) ? res.body : res.text;
    if (!validate(body)) {
      throw new Error(
        `${label} body does not match its ${type} schema: ${ajv.errorsText(validate.errors)}\n${res.text.slice(0, 500)}`,
      );
    }
  };

  const expectHeaders = (label: string, headers: Record<string, unknown>, res: HttpResult) => {
    if (res.headers.get('x-request-id') === null) throw new Error(`${label}: X-Request-ID missing`);
    for (const [name, header] of Object.entries(headers)) {
      const value = res.headers.get(name);
      if (value === null) continue;
      const [resolved] = follow(header, '');
      const typed =
        resolved.schema?.type === 'integer' && /^\d+$/.test(value) ? Number(value) : value;
      if (!ajv.validate(resolved.schema, typed)) {
        throw new Error(`${label}: header ${name}=${value}: ${ajv.errorsText(ajv.errors)}`);
      }
    }
  };

  /**
   * Throws unless `res` is an answer the document gives for `method` on the path `template`.
   * `label` names the request in the message (the concrete path; the template by default).
   */
  function expectDocumented(
    method: string,
    template: string,
    res: HttpResult,
    label = `${method.toUpperCase()} ${template}`,
  ): { status: number; contentType: string } {
    const head = method.toLowerCase() === 'head';
    const verb = head ? 'get' : method.toLowerCase();
    const operation = doc.paths[template]?.[verb];
    if (!operation)
      throw new Error(`${label}: ${verb.toUpperCase()} ${template} is not in the document`);
    const status = String(res.status);
    label = `${label} → ${status}`;
    const declared = operation.responses[status];
    if (!declared) {
      const listed = Object.keys(operation.responses).join(', ');
      throw new Error(
        `${label}: status ${status} is not documented for ${verb.toUpperCase()} ${template} (documented: ${listed})\n${res.text.slice(0, 500)}`,
      );
    }
    const [response, base] = follow(
      declared,
      pointer('paths', template, verb, 'responses', status),
    );
    const contentType = mediaType(res);
    if (response.content) {
      // A `+json` type may be matched to the `application/json` entry, as Prism and other
      // `+json`-aware validators do: the body must hold under every entry one could pick.
      const candidates = [contentType];
      if (/^application\/[^;]+\+json$/.test(contentType)) candidates.push('application/json');
      const listed = candidates.filter((type) => response.content[type]);
      if (listed.length === 0) {
        throw new Error(
          `${label}: media type "${contentType}" is not documented (documented: ${Object.keys(response.content).join(', ')})`,
        );
      }
      // A HEAD answer carries the GET's headers without its body.
      if (!head) {
        for (const type of listed) {
          expectBody(label, type, `${base}${pointer('content', type, 'schema')}`, res, contentType);
        }
      }
    } else if (res.text !== '') {
      throw new Error(`${label} should have no body, has: ${res.text.slice(0, 200)}`);
    }
    expectHeaders(label, response.headers ?? {}, res);
    return { status: res.status, contentType };
  }

  /** An answer to a method and path the document has no operation for: see UNROUTED_STATUSES. */
  function expectUnrouted(label: string, res: HttpResult): void {
    label = `${label} → ${res.status}`;
    if (!(UNROUTED_STATUSES as readonly number[]).includes(res.status)) {
      throw new Error(
        `${label}: the document has no operation here, and ${res.status} is not an answer for an unrouted request (${UNROUTED_STATUSES.join(', ')})\n${res.text.slice(0, 500)}`,
      );
    }
    const contentType = mediaType(res);
    if (contentType !== PROBLEM_JSON) {
      throw new Error(`${label}: media type "${contentType}" where ${PROBLEM_JSON} was due`);
    }
    expectBody(label, PROBLEM_JSON, pointer('components', 'schemas', 'Problem'), res, contentType);
    if (res.body.status !== res.status) {
      throw new Error(`${label}: the problem says status ${res.body.status}`);
    }
    expectHeaders(label, doc.components?.responses?.NotFound?.headers ?? {}, res);
  }

  const templates = Object.keys(doc.paths)
    .map((template) => ({
      template,
      pattern: new RegExp(
        `^${template
          .split('/')
          .map((part) =>
            /^\{[^}]+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
          )
          .join('/')}/?$`,
      ),
      parameters: (template.match(/\{/g) ?? []).length,
    }))
    // A literal segment wins over a parameter (`/tokens/self` before `/tokens/{id}`).
    .sort((a, b) => a.parameters - b.parameters);

  /** The document's path template a concrete path falls under, if any. */
  const templateOf = (path: string) =>
    templates.find(({ pattern }) => pattern.test(path))?.template;

  /**
   * Throws unless `res`, answered to `method` on `url` (a path with its query string), is what
   * the document says that operation answers. Paths under UNDOCUMENTED_PREFIXES and granted CORS
   * preflights are skipped.
   */
  function expectAnswerDocumented(method: string, url: string, res: HttpResult): void {
    const path = url.split(/[?#]/)[0] ?? '';
    if (UNDOCUMENTED_PREFIXES.some((prefix) => path.startsWith(prefix))) return;
    if (isGrantedPreflight(method, res)) return;
    const label = `${method.toUpperCase()} ${path}`;
    const template = templateOf(path);
    const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    if (template && doc.paths[template][verb]) {
      expectDocumented(method, template, res, `${label} (${template})`);
    } else {
      expectUnrouted(label, res);
    }
  }

  return Object.assign(expectDocumented, { expectAnswerDocumented, templateOf });
}
