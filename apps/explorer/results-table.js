import { el } from './dom.js';
import { formatBucket, formatChange, formatLabel, formatValue } from './format.js';
import { labelOf } from './words.js';

const compareNumbers = (a, b) => {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  return typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(b);
};

/**
 * The answer as a table: one column per dimension and metric (with the comparison and its
 * change beside each metric), sortable by any column, totals in the footer. Each cell carries
 * the API's raw value in `data-value`. Non-time labels link to the query filtered on them when
 * `linkFor` is given.
 */
export function renderTable(table, result, { linkFor, caption }) {
  const columns = [];
  for (const column of result.dimensions) {
    columns.push({
      key: column.name,
      label: labelOf(column),
      get: (row) => row[column.name],
      column,
    });
  }
  for (const column of result.metrics) {
    const { name } = column;
    const label = labelOf(column);
    columns.push({ key: name, label, get: (row) => row[name], column, metric: true });
    if (result.compared) {
      columns.push({
        key: `${name}:comparison`,
        label: `${label}, before`,
        get: (row) => row.comparison?.[name] ?? null,
        column,
        metric: true,
      });
      columns.push({
        key: `${name}:change`,
        label: `${label}, change`,
        get: (row) => row.change?.[name] ?? null,
        change: true,
        metric: true,
      });
    }
  }

  let sort = { key: null, direction: 'ascending' };
  const body = el('tbody');
  const headRow = el('tr');

  const cell = (spec, row) => {
    const value = spec.get(row);
    const isTime = result.timeDimension !== null && spec.column === result.timeDimension;
    const text = spec.change
      ? formatChange(value)
      : isTime
        ? formatBucket(value, spec.key, result.timezone)
        : formatValue(value, spec.column);
    const attributes = {
      class: [spec.metric ? 'num' : '', result.isIncomplete(row) ? 'incomplete' : '']
        .join(' ')
        .trim(),
      'data-column': spec.key,
      'data-value': JSON.stringify(value ?? null),
    };
    const isLabel = !spec.metric && !isTime;
    if (spec === columns[0] && result.isIncomplete(row)) {
      attributes.title = 'Incomplete: this period is not over yet';
    }
    return el(
      'td',
      attributes,
      isLabel && linkFor
        ? el('a', { href: linkFor(spec.key, value), 'data-filter': spec.key }, formatLabel(value))
        : isLabel
          ? formatLabel(value)
          : text,
    );
  };

  const fill = () => {
    const rows = [...result.rows];
    const spec = columns.find((c) => c.key === sort.key);
    if (spec) {
      const sign = sort.direction === 'ascending' ? 1 : -1;
      rows.sort((a, b) => {
        const [x, y] = [spec.get(a), spec.get(b)];
        // Missing values stay last whichever way the column is sorted.
        if (x === null || x === undefined || y === null || y === undefined) {
          return compareNumbers(x, y);
        }
        return sign * compareNumbers(x, y);
      });
    }
    body.replaceChildren(
      ...rows.map((row) =>
        el(
          'tr',
          {},
          columns.map((c) => cell(c, row)),
        ),
      ),
    );
    for (const th of headRow.children) {
      th.setAttribute('aria-sort', th.dataset.column === sort.key ? sort.direction : 'none');
    }
  };

  headRow.replaceChildren(
    ...columns.map((spec) =>
      el(
        'th',
        { scope: 'col', class: spec.metric ? 'num' : '', 'data-column': spec.key },
        el(
          'button',
          {
            type: 'button',
            title: spec.column?.description,
            onclick: () => {
              sort = {
                key: spec.key,
                direction:
                  sort.key === spec.key && sort.direction === 'ascending'
                    ? 'descending'
                    : 'ascending',
              };
              fill();
            },
          },
          spec.label,
        ),
      ),
    ),
  );

  const parts = [el('caption', {}, caption), el('thead', {}, headRow), body];
  const totals = result.metadata.totals;
  // Without dimensions the one row already is the total.
  if (totals && result.dimensions.length > 0) {
    const before = result.metadata.totals_comparison ?? {};
    const footer = el(
      'tr',
      {},
      el('th', { scope: 'row', colspan: result.dimensions.length }, 'Total'),
    );
    for (const spec of columns.slice(result.dimensions.length)) {
      const name = spec.column?.name ?? spec.key.split(':')[0];
      let value = totals[name];
      if (spec.key.endsWith(':comparison')) value = before[name];
      if (spec.change) value = relativeChange(totals[name], before[name]);
      const text = spec.change ? formatChange(value) : formatValue(value, spec.column);
      footer.append(
        el(
          'td',
          { class: 'num', 'data-column': spec.key, 'data-value': JSON.stringify(value ?? null) },
          text,
        ),
      );
    }
    parts.push(el('tfoot', {}, footer));
  }
  table.replaceChildren(...parts);
  fill();
}

/** The totals' change, worked out the way each row's `change` is: relative to the before. */
function relativeChange(now, before) {
  if (typeof now !== 'number' || typeof before !== 'number' || before === 0) return null;
  return (now - before) / Math.abs(before);
}
