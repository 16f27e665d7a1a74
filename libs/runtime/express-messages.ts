import http from 'node:http';
import type express from 'express';

type MessageClasses = {
  IncomingMessage: typeof http.IncomingMessage;
  ServerResponse: typeof http.ServerResponse;
};

/**
 * Request and response classes whose instances are born with the app's own prototypes
 * (`app.request`, `app.response`), to hand `http.createServer`. Express otherwise re-parents
 * Node's objects on every request with `Object.setPrototypeOf`, which on Node 20 and 22 leaves V8
 * unable to keep its fast paths for them (figures: docs/benchmarks.md, "Runtime tuning"); Node
 * 24 keeps them fast either way, so it is applied by Node version.
 * With the prototype already in place Express's own `setPrototypeOf` changes nothing, so
 * behaviour is Express's.
 *
 * They are subclasses of Node's own, and the app's prototypes become theirs (each inheriting
 * from the one Express made, so every Express method and `app` stays where it was). Only a
 * class lets V8 size the object for what Node's constructors put in it: a plain function that
 * called Node's constructor on its own `this` left the response with the function's few
 * in-object slots, and its forty-odd fields (some under symbol keys) then turned it into a
 * hash-table object on every request; `Reflect.construct` with a plain function as `new.target`
 * made a new object layout per request.
 */
export function expressMessages(app: express.Express): MessageClasses {
  class ExpressRequest extends http.IncomingMessage {}
  class ExpressResponse extends http.ServerResponse {}
  Object.setPrototypeOf(ExpressRequest.prototype, app.request);
  Object.setPrototypeOf(ExpressResponse.prototype, app.response);
  // Express's own objects now sit one step up every chain; the prototypes are Express's in all
  // but identity.
  app.request = ExpressRequest.prototype as unknown as express.Request;
  app.response = ExpressResponse.prototype as unknown as express.Response;
  return {
    IncomingMessage: ExpressRequest,
    ServerResponse: ExpressResponse as unknown as typeof http.ServerResponse,
  };
}
