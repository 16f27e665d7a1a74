import { el } from './dom.js';
import { formatDuration } from './format.js';

/** Each warning in plain words; the API's own message for any code this page does not know. */
export function warningText(warning) {
  switch (warning.code) {
    case 'result_truncated':
      return `Only ${warning.returned_rows ?? 'some'} of ${warning.total_rows ?? 'all'} rows are shown: the server caps the size of an answer. Add filters or drop a dimension to see the rest.`;
    case 'partial_result':
      return `The query used up its ${formatDuration(warning.timeout_ms ?? 0)} time budget, so these numbers may cover only part of the data.`;
    case 'stale_data':
      return `The numbers may be behind: changes from the last ${formatDuration(warning.lag_ms ?? 0)} are not included yet.`;
    default:
      return warning.message;
  }
}

export function renderWarnings(list, warnings) {
  list.replaceChildren(
    ...warnings.map((w) => el('li', { 'data-code': w.code, title: w.message }, warningText(w))),
  );
}

const when = (iso) => {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : date.toLocaleString();
};

const sourceWords = (source) =>
  source === 'facts' ? 'raw facts' : source?.startsWith('rollup') ? `rollup (${source})` : source;

/** The panel about the answer: where it came from, how long it took, how fresh it is. */
export function renderMetadata(list, metadata, roundTripMs) {
  const period = metadata.query?.period;
  const entries = [
    ['Source', metadata.source === undefined ? 'not reported' : sourceWords(metadata.source)],
    ['Cache', metadata.cache === undefined ? 'not reported' : metadata.cache],
    ['Elapsed', `${metadata.elapsed_ms} ms on the server, ${Math.round(roundTripMs)} ms here`],
    ['Rows read', Number(metadata.rows_read ?? 0).toLocaleString()],
    ['Bytes read', Number(metadata.bytes_read ?? 0).toLocaleString()],
    ['Data as of', metadata.data_as_of ? when(metadata.data_as_of) : '—'],
    [
      'Period',
      period
        ? `${period.name}: ${when(period.from)} to ${when(period.to)} (${period.timezone})`
        : '—',
    ],
    [
      'Compared with',
      metadata.comparison?.period
        ? `${when(metadata.comparison.period.from)} to ${when(metadata.comparison.period.to)}${metadata.comparison.cut_at_elapsed ? ', cut at the same elapsed time' : ''}`
        : null,
    ],
    ['Rows', `${metadata.row_count} of ${metadata.total_rows ?? metadata.row_count}`],
    ['Query id', metadata.query_id ?? '—'],
  ];
  list.replaceChildren(
    ...entries
      .filter(([, value]) => value !== null)
      .flatMap(([term, value]) => [
        el('dt', {}, term),
        el('dd', { 'data-term': term.toLowerCase().replace(/ /g, '_') }, value),
      ]),
  );
}
