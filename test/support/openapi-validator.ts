import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { HttpResult } from './http.ts';

const DOC_ID = 'openapi.json';
const pointer = (...parts: string[]) =>
  parts.map((part) => `/${part.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

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

  const follow = (node: any, base: string): [any, string] => {
    if (typeof node?.$ref !== 'string') return [node, base];
    const ref = node.$ref.slice(1) as string;
    const target = ref
      .split('/')
      .slice(1)
      .reduce((at: any, key: string) => at?.[key], doc);
    return [target, ref];
  };

  return function expectDocumented(
    method: string,
    template: string,
    res: HttpResult,
  ): { status: number; contentType: string } {
    const operation = doc.paths[template]?.[method.toLowerCase()];
    if (!operation) throw new Error(`${method} ${template} is not in the document`);
    const status = String(res.status);
    const declared = operation.responses[status];
    if (!declared) {
      throw new Error(`${method} ${template} answered ${status}, which is not documented`);
    }
    const [response, base] = follow(
      declared,
      pointer('paths', template, method.toLowerCase(), 'responses', status),
    );
    const contentType = (res.headers.get('content-type') ?? '').split(';')[0] ?? '';
    if (response.content) {
      // A `+json` type may be matched to the `application/json` entry, as Prism and other
      // `+json`-aware validators do: the body must hold under every entry one could pick.
      const candidates = [contentType];
      if (/^application\/[^;]+\+json$/.test(contentType)) candidates.push('application/json');
      const listed = candidates.filter((type) => response.content[type]);
      if (listed.length === 0) {
        throw new Error(`${method} ${template} ${status}: ${contentType} is not documented`);
      }
      for (const type of listed) {
        const at = `${DOC_ID}#${base}${pointer('content', type, 'schema')}`;
        const validate = ajv.getSchema(at) ?? ajv.compile({ $ref: at });
        const body = contentType.endsWith('json') ? res.body : res.text;
        if (!validate(body)) {
          throw new Error(
            `${method} ${template} ${status} body does not match its ${type} schema: ${ajv.errorsText(validate.errors)}\n${res.text.slice(0, 500)}`,
          );
        }
      }
    } else if (res.text !== '') {
      throw new Error(`${method} ${template} ${status} should have no body`);
    }
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const value = res.headers.get(name);
      if (name === 'X-Request-ID' && value === null) throw new Error('X-Request-ID missing');
      if (value === null) continue;
      const [resolved] = follow(header, '');
      const typed = resolved.schema?.type === 'integer' ? Number(value) : value;
      if (!ajv.validate(resolved.schema, typed)) {
        throw new Error(`header ${name}=${value}: ${ajv.errorsText(ajv.errors)}`);
      }
    }
    return { status: res.status, contentType };
  };
}
