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
