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

/** An instant as the page writes dates everywhere (the reader's locale), in the query's zone. */
const when = (iso, timeZone) => {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return new Intl.DateTimeFormat(undefined, {
    dateStyle: 'medium',
    timeStyle: 'short',
    timeZone,
  }).format(date);
};

/** A period's days in the reader's locale, its end (exclusive) shown as the last day in it. */
function days(range, timeZone) {
  const from = new Date(range.from);
  const to = new Date(new Date(range.to).getTime() - 1);
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()))
    return `${range.from} – ${range.to}`;
  const format = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone });
  const [a, b] = [format.format(from), format.format(to)];
  return a === b ? a : `${a} – ${b}`;
}

/** A date alone is a wall-clock day, written as one; anything with a time is an instant. */
const dayOrInstant = (iso, timeZone) =>
  /^\d{4}-\d{2}-\d{2}$/.test(String(iso))
    ? new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' }).format(
        new Date(`${iso}T00:00:00Z`),
      )
    : when(iso, timeZone);

const ago = (iso) => {
  const minutes = Math.round((Date.now() - new Date(iso).getTime()) / 60_000);
  if (!Number.isFinite(minutes)) return '';
  if (minutes < 1) return ' (just now)';
  return ` (${formatDuration(minutes * 60_000)} ago)`;
};

const bytes = (n) => {
  const value = Number(n ?? 0);
  if (value < 1024) return `${value} bytes`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let scaled = value / 1024;
  let unit = 0;
  while (scaled >= 1024 && unit < units.length - 1) {
    scaled /= 1024;
    unit++;
  }
  return `${scaled.toFixed(1)} ${units[unit]} (${value.toLocaleString()} bytes)`;
};

const sourceWords = (source) =>
  source === 'facts' ? 'raw facts' : source?.startsWith('rollup') ? `rollup (${source})` : source;

const definitions = (list, entries) =>
  list.replaceChildren(
    ...entries
      .filter(([, value]) => value !== null)
      .flatMap(([term, value]) => [
        el('dt', {}, term),
        el('dd', { 'data-term': term.toLowerCase().replace(/ /g, '_') }, value),
      ]),
  );

/**
 * What a reader of the answer needs first (its period, how fresh it is, what to watch for),
 * then, folded away in `engineList`, how the engine answered it.
 */
export function renderMetadata(list, engineList, result, { roundTripMs, periodLabel }) {
  const { metadata, warnings } = result;
  const period = metadata.query?.period;
  const zone = period?.timezone;
  definitions(list, [
    ['Period', period ? `${periodLabel}: ${days(period, zone)} (${zone})` : '—'],
    [
      'Data as of',
      metadata.data_as_of ? `${when(metadata.data_as_of, zone)}${ago(metadata.data_as_of)}` : '—',
    ],
    [
      'Not over yet',
      metadata.incomplete_from
        ? `from ${dayOrInstant(metadata.incomplete_from, zone)}: shown dotted and in italics`
        : null,
    ],
    ['Warnings', warnings.length > 0 ? warnings.map(warningText).join(' ') : 'None'],
    [
      'Compared with',
      metadata.comparison?.period
        ? `${days(metadata.comparison.period, zone)}${metadata.comparison.cut_at_elapsed ? ', cut at the same elapsed time' : ''}`
        : null,
    ],
    ['Rows', `${metadata.row_count} of ${metadata.total_rows ?? metadata.row_count}`],
  ]);
  definitions(engineList, [
    ['Source', metadata.source === undefined ? 'not reported' : sourceWords(metadata.source)],
    ['Cache', metadata.cache === undefined ? 'not reported' : metadata.cache],
    ['Elapsed', `${metadata.elapsed_ms} ms on the server, ${Math.round(roundTripMs)} ms here`],
    ['Rows read', Number(metadata.rows_read ?? 0).toLocaleString()],
    ['Bytes read', bytes(metadata.bytes_read)],
    ['Query id', metadata.query_id ?? '—'],
  ]);
}
