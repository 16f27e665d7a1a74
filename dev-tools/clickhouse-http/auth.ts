import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { exception } from './exceptions.ts';

/** The one user the endpoint knows; a server's default is `default` with no password. */
export interface User {
  name: string;
  password: string;
}

/**
 * Who the request says it is, the ways a server reads it (authenticateUserByHTTP.cpp): the
 * `X-ClickHouse-User`/`-Key` headers, HTTP basic auth, or `user`/`password` URL parameters, one
 * way only; none of them means `default` with no password. Returns the user name.
 */
export function authenticate(req: IncomingMessage, url: URL, user: User): string {
  const headerUser = req.headers['x-clickhouse-user'];
  const headerKey = req.headers['x-clickhouse-key'];
  const authorization = req.headers.authorization;
  const inParams = url.searchParams.has('user') || url.searchParams.has('password');
  const inHeaders = headerUser !== undefined || headerKey !== undefined;
  if ([inHeaders, authorization !== undefined, inParams].filter(Boolean).length > 1) {
    throw exception(
      'AUTHENTICATION_FAILED',
      'Invalid authentication: it is not allowed to use more than one authentication method at once',
    );
  }
  let name = 'default';
  let password = '';
  if (inHeaders) {
    name = String(headerUser ?? 'default');
    password = String(headerKey ?? '');
  } else if (authorization !== undefined) {
    const basic = /^Basic\s+(\S+)$/i.exec(authorization);
    const decoded = basic ? Buffer.from(basic[1] as string, 'base64').toString() : undefined;
    const colon = decoded?.indexOf(':') ?? -1;
    if (decoded === undefined || colon < 0) {
      throw exception(
        'AUTHENTICATION_FAILED',
        'Invalid authentication: the stand-in takes HTTP basic credentials only',
      );
    }
    name = decoded.slice(0, colon);
    password = decoded.slice(colon + 1);
  } else if (inParams) {
    name = url.searchParams.get('user') ?? 'default';
    password = url.searchParams.get('password') ?? '';
  }
  if (name !== user.name || !same(password, user.password)) {
    throw exception(
      'AUTHENTICATION_FAILED',
      `${name}: Authentication failed: password is incorrect, or there is no user with such name`,
    );
  }
  return name;
}

function same(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
