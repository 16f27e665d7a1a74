/**
 * A refusal from the Cairn API as a person reads it: a problem's title and detail (RFC 9457),
 * or a validation 422's field errors one per line as `loc: msg`.
 */
export function describeRefusal(status: number, body: unknown): string {
  const answer = (typeof body === 'object' && body !== null ? body : {}) as {
    title?: unknown;
    detail?: unknown;
  };
  if (Array.isArray(answer.detail)) {
    const lines = answer.detail.map((issue: { loc?: unknown; msg?: unknown }) => {
      const loc = Array.isArray(issue?.loc) ? issue.loc.join('.') : '';
      return `  ${loc ? `${loc}: ` : ''}${String(issue?.msg ?? '')}`;
    });
    return [`invalid request (${status}):`, ...lines].join('\n');
  }
  const title = typeof answer.title === 'string' ? answer.title : `HTTP ${status}`;
  const detail = typeof answer.detail === 'string' ? answer.detail : '';
  return `${title} (${status})${detail ? `: ${detail}` : ''}`;
}
