import { openApiValidator } from './openapi-validator.ts';

type Validator = ReturnType<typeof openApiValidator>;

/** Each server's validator by origin, built from the document that very server serves. */
const validators = new Map<string, Promise<Validator>>();

/** Checks answers from the server at `url` against `doc`, the document it serves. */
export function serveDocument(url: string, doc: unknown): void {
  validators.set(new URL(url).origin, Promise.resolve(openApiValidator(doc)));
}

/**
 * The validator for the server at `url`. A server the harness did not start in this process
 * (a child process, say) is asked once for its `/openapi.json`, before the first answer is
 * checked, so that a server stopped later in the test is still checked.
 */
export function validatorFor(url: string): Promise<Validator> {
  const origin = new URL(url).origin;
  let validator = validators.get(origin);
  if (!validator) {
    validator = fetch(`${origin}/openapi.json`).then(async (res) => {
      if (res.status !== 200) throw new Error(`${origin}/openapi.json answered ${res.status}`);
      return openApiValidator(await res.json());
    });
    validators.set(origin, validator);
    // A failed fetch is retried by the next request rather than remembered.
    validator.catch(() => validators.delete(origin));
  }
  return validator;
}
