/** One element of the 422 body, in the shape FastAPI/pydantic clients already parse. */
export interface ValidationIssue {
  loc: Array<string | number>;
  msg: string;
  type: string;
}

/** The closed set of non-validation failures and the status each one is answered with. */
export const ERROR_CODES = {
  bad_request: { status: 400, title: 'Bad Request' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not Found' },
  method_not_allowed: { status: 405, title: 'Method Not Allowed' },
  not_acceptable: { status: 406, title: 'Not Acceptable' },
  conflict: { status: 409, title: 'Conflict' },
  precondition_failed: { status: 412, title: 'Precondition Failed' },
  payload_too_large: { status: 413, title: 'Payload Too Large' },
  unsupported_media_type: { status: 415, title: 'Unsupported Media Type' },
  unprocessable: { status: 422, title: 'Unprocessable Content' },
  memory_limit_exceeded: { status: 422, title: 'Memory Limit Exceeded' },
  rate_limited: { status: 429, title: 'Too Many Requests' },
  internal: { status: 500, title: 'Internal Server Error' },
  bad_gateway: { status: 502, title: 'Bad Gateway' },
  unavailable: { status: 503, title: 'Service Unavailable' },
  storage_full: { status: 503, title: 'Storage Full' },
  storage_read_only: { status: 503, title: 'Storage Read-Only' },
  out_of_memory: { status: 503, title: 'Out of Memory' },
  timeout: { status: 504, title: 'Gateway Timeout' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldError {
  field: string;
  code: string;
  message: string;
}

export interface AppErrorExtra {
  errors?: FieldError[];
  headers?: Record<string, string>;
  /** Extra problem members, such as the cycle path of a dependency conflict. */
  members?: Record<string, unknown>;
}

/** Every failure Cairn answers on purpose; anything else thrown becomes a bare 500. */
export class AppError extends Error {
  override name = 'AppError';
  readonly code: ErrorCode;
  readonly detail: string;
  readonly extra: AppErrorExtra;
  constructor(code: ErrorCode, detail: string, extra: AppErrorExtra = {}) {
    super(detail);
    this.code = code;
    this.detail = detail;
    this.extra = extra;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }
}

/** How many issues one answer lists: a megabyte of bad items must not earn a bigger reply. */
export const MAX_ISSUES = 100;

/** Bad input: answered as 422 `{detail:[{loc,msg,type}]}`, the first MAX_ISSUES issues. */
export class ValidationError extends Error {
  override name = 'ValidationError';
  readonly issues: ValidationIssue[];
  constructor(issues: ValidationIssue[]) {
    const listed = issues.slice(0, MAX_ISSUES);
    super(listed.map((issue) => `${issue.loc.join('.')}: ${issue.msg}`).join('; '));
    this.issues = listed;
  }

  static at(loc: Array<string | number>, msg: string, type: string): ValidationError {
    return new ValidationError([{ loc, msg, type }]);
  }
}

/**
 * Runs each check and gathers the issues of those that throw a ValidationError, so a caller
 * hears about every bad input at once; any other error propagates.
 */
export function gatherIssues(checks: Array<() => unknown>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const check of checks) {
    try {
      check();
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      issues.push(...error.issues);
    }
  }
  return issues;
}
