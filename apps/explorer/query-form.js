import { byId, el } from './dom.js';
import { labelOf } from './words.js';

const NONE = '(none)';
const DEFAULT_METRICS = ['tasks_created', 'tasks_completed'];
const DEFAULT_DIMENSIONS = ['day'];
const COMPARE_LABELS = { previous_period: 'Previous period', previous_year: 'Previous year' };
const WEEK_START_LABELS = { monday: 'Monday', sunday: 'Sunday' };
let filterIds = 0;

/**
 * The query pickers, built from the catalog and from what the server's request schema accepts
 * (`members`: the query body's properties in /openapi.json), so a control is offered only when
 * the server would take it.
 */
export function createQueryForm({ catalog, members, suggest }) {
  const metricBox = byId('metrics');
  const dimensionBox = byId('dimensions');
  const period = byId('period');
  const from = byId('range-from');
  const to = byId('range-to');
  const timezone = byId('timezone');
  const business = byId('business');
  const filterList = byId('filters');
  const compare = byId('compare');
  const totals = byId('totals');
  const weekStart = byId('week-start');
  const fill = byId('fill');

  // Each choice by its label, its description a tap away (a hover title alone reaches no
  // finger and no keyboard): the "?" button shows it under the choice and says so.
  const checkbox = (group, item) => {
    const id = `about-${group}-${item.name}`;
    const label = labelOf(item);
    const about = el('p', { id, class: 'about', hidden: true }, item.description ?? '');
    const toggle = el(
      'button',
      {
        type: 'button',
        class: 'info',
        'aria-expanded': 'false',
        'aria-controls': id,
        'aria-label': `About ${label}`,
        onclick: () => {
          about.hidden = !about.hidden;
          toggle.setAttribute('aria-expanded', String(!about.hidden));
        },
      },
      '?',
    );
    return el(
      'div',
      { class: 'choice' },
      el(
        'label',
        { title: item.description },
        el('input', { type: 'checkbox', name: group, value: item.name, 'aria-describedby': id }),
        el('span', {}, label),
      ),
      item.description ? toggle : null,
      about,
    );
  };
  metricBox.replaceChildren(...catalog.metrics.map((item) => checkbox('metric', item)));
  dimensionBox.replaceChildren(...catalog.dimensions.map((item) => checkbox('dimension', item)));

  const defaultPeriod = catalog.periods.find((p) => p.default)?.name ?? catalog.periods[0]?.name;
  period.replaceChildren(
    ...catalog.periods.map((p) =>
      el('option', { value: p.name, title: p.description }, labelOf(p)),
    ),
    ...(members.date_range ? [el('option', { value: 'custom' }, 'Date range…')] : []),
  );
  const periodDescription = byId('period-description');
  const describePeriod = () => {
    byId('field-date_range').hidden = period.value !== 'custom';
    const chosen = catalog.periods.find((p) => p.name === period.value);
    periodDescription.textContent = chosen?.description ?? 'Both days included.';
  };
  period.addEventListener('change', describePeriod);

  byId('timezones').replaceChildren(
    ...(Intl.supportedValuesOf?.('timeZone') ?? []).map((zone) => el('option', { value: zone })),
  );
  const defaultZone = catalog.default_timezone ?? 'UTC';

  const compareModes = catalog.compare ?? members.compare?.enum ?? [];
  compare.replaceChildren(
    el('option', { value: '' }, 'Nothing'),
    ...compareModes.map((mode) => el('option', { value: mode }, COMPARE_LABELS[mode] ?? mode)),
  );
  byId('field-compare').hidden = compareModes.length === 0;
  const canTotal = (catalog.include ?? members.include?.items?.enum ?? []).includes('totals');
  byId('field-include').hidden = !canTotal;
  const weekStarts = members.week_start?.enum ?? [];
  const defaultWeekStart = members.week_start?.default ?? weekStarts[0];
  weekStart.replaceChildren(
    ...weekStarts.map((day) => el('option', { value: day }, WEEK_START_LABELS[day] ?? day)),
  );
  byId('field-week_start').hidden = weekStarts.length === 0;
  const canFill = (members.fill?.enum ?? []).includes('zero');
  byId('field-fill').hidden = !canFill;

  // Filters are on labels; a time dimension is filtered by the period instead.
  const labelDimensions = catalog.dimensions.filter((d) => !d.time);

  function addFilter(filter = { dimension: labelDimensions[0]?.name, op: 'eq', values: [] }) {
    const id = ++filterIds;
    const suggestions = el('datalist', { id: `filter-values-${id}` });
    const item = el(
      'li',
      {},
      el('label', { for: `filter-dim-${id}` }, 'Dimension'),
      el('label', { for: `filter-op-${id}` }, 'Operator'),
      el(
        'select',
        { id: `filter-dim-${id}`, class: 'dimension' },
        // A link may name a dimension the list leaves out: kept, so the query reads as sent.
        [
          ...labelDimensions,
          ...catalog.dimensions.filter((d) => d.time && d.name === filter.dimension),
        ].map((d) => el('option', { value: d.name }, labelOf(d))),
      ),
      el(
        'select',
        { id: `filter-op-${id}`, class: 'op' },
        (catalog.filter_ops ?? ['eq', 'neq', 'in', 'not_in']).map((op) =>
          el('option', { value: op }, op),
        ),
      ),
      el(
        'label',
        { class: 'values' },
        'Values ',
        el('input', {
          class: 'values-input',
          'aria-describedby': 'filters-hint',
          list: suggestions.id,
          autocomplete: 'off',
          value: filter.values.map((v) => (v === null ? NONE : v)).join(', '),
        }),
      ),
      suggestions,
      el('button', { type: 'button', onclick: () => item.remove() }, 'Remove filter'),
    );
    item.querySelector('.dimension').value = filter.dimension;
    item.querySelector('.op').value = filter.op;
    typeAhead(item.querySelector('.values-input'), item.querySelector('.dimension'), suggestions);
    filterList.append(item);
    return item;
  }
  /**
   * Suggestions for the value being typed (the text after the last comma), each offered as the
   * whole field with it completed, so the browser's list matches what is already there.
   */
  function typeAhead(input, dimension, list) {
    let timer = null;
    let asked = 0;
    input.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(async () => {
        const mine = ++asked;
        const text = input.value;
        const cut = text.lastIndexOf(',') + 1;
        const head = cut > 0 ? `${text.slice(0, cut).trimEnd()} ` : '';
        const values = await suggest(dimension.value, text.slice(cut).trim(), business.value);
        if (mine !== asked) return;
        list.replaceChildren(...values.map((value) => el('option', { value: `${head}${value}` })));
      }, 200);
    });
  }

  byId('add-filter').addEventListener('click', () => {
    addFilter().querySelector('select').focus();
  });

  const checked = (box) => [...box.querySelectorAll('input:checked')].map((input) => input.value);
  const check = (box, names) => {
    for (const input of box.querySelectorAll('input')) input.checked = names.includes(input.value);
  };

  /** The request body the form describes. */
  function read() {
    const body = { metrics: checked(metricBox) };
    const dimensions = checked(dimensionBox);
    if (dimensions.length > 0) body.dimensions = dimensions;
    if (period.value === 'custom') body.date_range = [from.value, to.value];
    else body.period = period.value;
    if (timezone.value.trim() !== '') body.timezone = timezone.value.trim();
    if (business.value !== '') body.business = business.value;
    const filters = [...filterList.children].map((item) => ({
      dimension: item.querySelector('.dimension').value,
      op: item.querySelector('.op').value,
      values: item
        .querySelector('.values-input')
        .value.split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '')
        .map((v) => (v === NONE ? null : v)),
    }));
    if (filters.length > 0) body.filters = filters;
    if (compare.value !== '') body.compare = compare.value;
    if (canTotal && totals.checked) body.include = ['totals'];
    // The default is left out, so a query the form writes stays as short as one typed by hand.
    if (weekStarts.length > 0 && weekStart.value !== defaultWeekStart) {
      body.week_start = weekStart.value;
    }
    if (canFill && fill.checked) body.fill = 'zero';
    return body;
  }

  /** Shows `body` in the controls; members the form has no control for are kept as they are. */
  function write(body) {
    check(metricBox, body.metrics ?? DEFAULT_METRICS);
    check(dimensionBox, body.dimensions ?? (body.metrics ? [] : DEFAULT_DIMENSIONS));
    if (Array.isArray(body.date_range) && members.date_range) {
      period.value = 'custom';
      [from.value, to.value] = body.date_range;
    } else {
      period.value = body.period ?? defaultPeriod;
    }
    describePeriod();
    timezone.value = body.timezone ?? defaultZone;
    business.value = body.business ?? '';
    filterList.replaceChildren();
    for (const filter of body.filters ?? []) addFilter(filter);
    compare.value = body.compare ?? '';
    totals.checked = body.metrics ? (body.include ?? []).includes('totals') : true;
    if (weekStarts.length > 0) weekStart.value = body.week_start ?? defaultWeekStart;
    fill.checked = body.fill === 'zero';
  }

  /** The token's businesses, once known. */
  function setBusinesses(names) {
    const current = business.value;
    business.replaceChildren(
      el('option', { value: '' }, 'All my businesses'),
      ...names.map((name) => el('option', { value: name }, name)),
    );
    business.value = names.includes(current) ? current : '';
  }

  /** Where a 422 `loc` points: the control's container, or null for the form as a whole. */
  function fieldFor(loc) {
    if (loc[0] !== 'body' || loc.length < 2) return null;
    const [, member, index] = loc;
    if (member === 'filters' && typeof index === 'number') {
      return filterList.children[index] ?? byId('field-filters');
    }
    if (member === 'include') return byId('field-include');
    return byId(`field-${member}`);
  }

  return { read, write, setBusinesses, fieldFor };
}
