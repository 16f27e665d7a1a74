import { AppError, type ErrorCode } from './errors.ts';

/** What parsers and decoders throw: http-errors objects carry the status they mean. */
interface ParserError {
  type?: string;
  status?: number;
  statusCode?: number;
  limit?: number;
  code?: string;
}

/** The detail of the 400 for a body that is not JSON. */
export const NOT_JSON = 'The request body is not valid JSON.';

const MESSAGES: Record<string, string> = {
  'entity.parse.failed': NOT_JSON,
  'entity.verify.failed': 'The request body was refused.',
  'encoding.unsupported':
    'The request body encoding is not supported; send identity, gzip, deflate or br.',
  'charset.unsupported': 'The request body charset is not supported; send UTF-8.',
  'request.aborted': 'The request body was not received in full.',
  'request.size.invalid': 'The request body does not match its Content-Length.',
  'stream.encoding.set': 'The request body could not be read.',
};

const CODES: Partial<Record<number, ErrorCode>> = {
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/**
 * The one place where whatever a body parser, a decompressor or the router's percent-decoding
 * throws at a client's bytes becomes the 4xx problem it deserves. Anything carrying a 4xx status
 * is the client's fault by construction; the detail is ours, never the library's message.
 */
export function clientError(error: unknown): AppError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const failure = error as ParserError;
  const status = failure.status ?? failure.statusCode;
  if (typeof status !== 'number' || status < 400 || status > 499) return undefined;
  if (failure.type === 'entity.too.large' || status === 413) {
    return new AppError(
      'payload_too_large',
      `The request body is larger than the ${failure.limit ?? 1_048_576} bytes allowed (after decompression).`,
    );
  }
  if (error instanceof URIError) {
    return new AppError('bad_request', 'The request path holds a malformed percent-encoding.');
  }
  if (failure.code?.startsWith('Z_') || failure.code?.startsWith('ERR__')) {
    return new AppError(
      'bad_request',
      'The request body could not be decompressed as its Content-Encoding says.',
    );
  }
  const detail = (failure.type && MESSAGES[failure.type]) ?? 'The request could not be read.';
  return new AppError(CODES[status] ?? 'bad_request', detail);
}
