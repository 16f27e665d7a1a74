// ClickHouse's exceptions as its HTTP interface shows them: the text
// `Code: N. DB::Exception: … (NAME) (version …)`, the `X-ClickHouse-Exception-Code` header and
// the status src/Server/HTTP/exceptionCodeToHTTPStatus.cpp gives each code.

export class ClickHouseException extends Error {
  readonly code: number;
  readonly type: string;

  /** The engine's own text, `Code: N. DB::Exception: … (NAME)`, when the engine raised it. */
  readonly #engineText: string | undefined;

  /** `message` is the part after `DB::Exception: `, without the trailing `(NAME)`. */
  constructor(code: number, type: string, message: string, engineText?: string) {
    super(message);
    this.code = code;
    this.type = type;
    this.#engineText = engineText;
  }

  /** The whole text a server sends, `(version …)` included. */
  text(version: string): string {
    const text =
      this.#engineText ?? `Code: ${this.code}. DB::Exception: ${this.message}. (${this.type})`;
    return `${text} (version ${version})`;
  }

  get status(): number {
    return httpStatus(this.type);
  }
}

/** Codes the endpoint raises itself (the engine raises the rest). */
export const CODES = {
  SYNTAX_ERROR: 62,
  NOT_IMPLEMENTED: 48,
  BAD_ARGUMENTS: 36,
  READONLY: 164,
  QUERY_WAS_CANCELLED: 394,
  QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING: 216,
  UNKNOWN_SETTING: 115,
  UNKNOWN_QUERY_PARAMETER: 456,
  BAD_QUERY_PARAMETER: 457,
  AUTHENTICATION_FAILED: 516,
  ZLIB_INFLATE_FAILED: 354,
  STD_EXCEPTION: 1001,
} as const;

export const exception = (type: keyof typeof CODES, message: string): ClickHouseException =>
  new ClickHouseException(CODES[type], type, message);

const ENGINE_TEXT = /^Code: (\d+)\. DB::Exception: ([\s\S]*?)\.? \(([A-Z0-9_]+)\)$/;

/** What chDB threw (its message is the engine's exception text), as a ClickHouse exception. */
export function fromEngine(error: unknown): ClickHouseException {
  if (error instanceof ClickHouseException) return error;
  const text = error instanceof Error ? error.message : String(error);
  const trimmed = text.trim();
  const match = ENGINE_TEXT.exec(trimmed);
  if (match) {
    const [, code, message, type] = match as unknown as [string, string, string, string];
    return new ClickHouseException(Number(code), type, message, trimmed);
  }
  return exception('STD_EXCEPTION', text.replace(/\.$/, ''));
}

// exceptionCodeToHTTPStatus.cpp, by name: codes differ between versions, names do not.
const STATUS_BY_TYPE: Record<string, number> = {};
const statuses: Array<[number, string[]]> = [
  [401, ['REQUIRED_PASSWORD']],
  [
    403,
    [
      'UNKNOWN_USER',
      'WRONG_PASSWORD',
      'AUTHENTICATION_FAILED',
      'SET_NON_GRANTED_ROLE',
      'ACCESS_DENIED',
    ],
  ],
  [
    400,
    [
      'BAD_ARGUMENTS',
      'CANNOT_COMPILE_REGEXP',
      'CANNOT_PARSE_TEXT',
      'CANNOT_PARSE_ESCAPE_SEQUENCE',
      'CANNOT_PARSE_QUOTED_STRING',
      'CANNOT_PARSE_DATE',
      'CANNOT_PARSE_DATETIME',
      'CANNOT_PARSE_NUMBER',
      'CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING',
      'CANNOT_PARSE_IPV4',
      'CANNOT_PARSE_IPV6',
      'CANNOT_PARSE_INPUT_ASSERTION_FAILED',
      'CANNOT_PARSE_UUID',
      'DUPLICATE_COLUMN',
      'ILLEGAL_COLUMN',
      'UNKNOWN_ELEMENT_IN_AST',
      'UNKNOWN_TYPE_OF_AST_NODE',
      'THERE_IS_NO_COLUMN',
      'TOO_DEEP_AST',
      'TOO_BIG_AST',
      'UNEXPECTED_AST_STRUCTURE',
      'SYNTAX_ERROR',
      'INCORRECT_DATA',
      'TYPE_MISMATCH',
      'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
    ],
  ],
  [
    404,
    [
      'UNKNOWN_TABLE',
      'UNKNOWN_FUNCTION',
      'UNKNOWN_IDENTIFIER',
      'UNKNOWN_TYPE',
      'UNKNOWN_STORAGE',
      'UNKNOWN_DATABASE',
      'UNKNOWN_SETTING',
      'UNKNOWN_DIRECTION_OF_SORTING',
      'UNKNOWN_AGGREGATE_FUNCTION',
      'UNKNOWN_FORMAT',
      'UNKNOWN_DATABASE_ENGINE',
      'UNKNOWN_TYPE_OF_QUERY',
      'UNKNOWN_ROLE',
    ],
  ],
  [413, ['QUERY_IS_TOO_LARGE']],
  [501, ['NOT_IMPLEMENTED']],
  [503, ['SOCKET_TIMEOUT', 'CANNOT_OPEN_FILE', 'CANNOT_SCHEDULE_TASK']],
  [411, ['HTTP_LENGTH_REQUIRED']],
  [408, ['TIMEOUT_EXCEEDED']],
  [415, ['UNSUPPORTED_MEDIA_TYPE']],
];
for (const [status, types] of statuses) for (const type of types) STATUS_BY_TYPE[type] = status;

export const httpStatus = (type: string): number => STATUS_BY_TYPE[type] ?? 500;
