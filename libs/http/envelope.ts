export interface ResponseMeta {
  request_id: string;
  timestamp: string;
}

export function responseMeta(requestId: string, now: Date = new Date()): ResponseMeta {
  return { request_id: requestId, timestamp: now.toISOString() };
}

/** The single-resource envelope: `{data, meta}`. */
export function single<T>(data: T, requestId: string): { data: T; meta: ResponseMeta } {
  return { data, meta: responseMeta(requestId) };
}

/** The query of a page-number list: `page` and `per_page` (at most 100). */
export const pageNumberQuery = {
  type: 'object',
  properties: {
    // Bounded so that the row offset, (page - 1) × per_page, stays a Postgres bigint.
    page: { type: 'integer', minimum: 1, maximum: 2_147_483_647, default: 1 },
    per_page: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
  },
  additionalProperties: false,
} as const;

/** The list envelope of a page-number list: `{data, meta}` with the paging members. */
export function pageOfList<T>(
  data: T[],
  requestId: string,
  paging: { total: number; page: number; per_page: number },
) {
  const { total, page, per_page } = paging;
  return {
    data,
    meta: {
      ...responseMeta(requestId),
      total,
      page,
      per_page,
      total_pages: Math.ceil(total / per_page),
    },
  };
}
