import { ApiError, api } from './api.js';
import { byId, el, say } from './dom.js';
import { drawFlowChart, flowSeries, statusWords } from './flow-chart.js';
import { formatBucket, formatLabel } from './format.js';
import { describeResult } from './result-model.js';
import { drawChart } from './results-chart.js';
import { labelOf } from './words.js';

const CYCLE_TIME = ['p50_cycle_time_hours', 'p85_cycle_time_hours', 'p95_cycle_time_hours'];
const AGING = ['avg_age_hours', 'p85_age_hours'];
/** Tasks in each status at each bucket's end, closed ones included: the cumulative flow. */
const FLOW_BANDS = ['tasks_in_status'];
const BOTTLENECKS = 10;
/** One seed for every forecast: the same data shows the same dates on every visit. */
const FORECAST_SEED = 1;
/** Periods short enough to draw day by day; longer ones go by week. */
const DAILY = /(?:^|_)(?:today|yesterday|7_days|14_days|30_days|week|month)$/;
const PERIODS = ['last_30_days', 'last_90_days', 'last_180_days', 'last_12_months', 'this_year'];

const day = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });
const decimal = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
/** A `YYYY-MM-DD` completion date in words, or why there is none. */
const completionDay = (date) =>
  date ? day.format(new Date(`${date}T00:00:00Z`)) : 'not within five years';

/** What a refused part says: the API's words, or what the token lacks. */
function reason(err, scope) {
  if (err instanceof ApiError && err.status === 403) {
    return `This token cannot read it (it needs ${scope}).`;
  }
  return err.message;
}

/**
 * The flow view: for one business (and project), how work moves — a cumulative flow diagram,
 * cycle-time percentiles, the age of open work, the tasks holding up the most others (each
 * opening the dependents browser) and when the open work will be done. Each part is asked on
 * its own and fails on its own; a metric this server does not offer is said so, not drawn.
 */
export function createFlow({ openTask }) {
  const form = byId('flow-form');
  const business = byId('flow-business');
  const project = byId('flow-project');
  const period = byId('flow-period');
  const status = byId('flow-status');
  const parts = {
    cfd: { status: byId('cfd-status'), canvas: byId('cfd-canvas'), table: byId('cfd-table') },
    cycle: { status: byId('cycle-status'), canvas: byId('cycle-canvas') },
    aging: { status: byId('aging-status'), canvas: byId('aging-canvas') },
    bottlenecks: { status: byId('bottlenecks-status'), list: byId('bottlenecks-list') },
    forecast: { status: byId('forecast-status'), list: byId('forecast-list') },
  };
  const charts = new Map();
  let catalog = null;
  let generation = 0;

  const offered = (names) => names.filter((n) => catalog.metrics.some((m) => m.name === n));
  const timeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

  function baseQuery() {
    const query = { business: business.value, period: period.value, timezone: timeZone() };
    const name = project.value.trim();
    if (name) query.filters = [{ dimension: 'project', op: 'eq', values: [name] }];
    return query;
  }

  function replaceChart(key, chart) {
    charts.get(key)?.destroy();
    if (chart) charts.set(key, chart);
    else charts.delete(key);
  }

  async function lines(key, metrics, mine) {
    const part = parts[key];
    const names = offered(metrics);
    replaceChart(key, null);
    part.canvas.replaceChildren();
    if (names.length === 0) {
      say(part.status, 'This server does not offer these metrics.');
      return;
    }
    say(part.status, 'Loading…');
    try {
      const answer = await api('POST', '/api/v1/query', {
        ...baseQuery(),
        metrics: names,
        dimensions: ['week'],
      });
      if (mine !== generation) return;
      const result = describeResult(answer, catalog);
      const chart = drawChart(part.canvas, result, '');
      replaceChart(key, chart);
      const filled = result.rows.filter((row) => names.some((n) => row[n] !== null));
      say(
        part.status,
        filled.length === 0
          ? 'No task counts here in this period.'
          : `${names.map((n) => labelOf(result.metrics.find((m) => m.name === n))).join(', ')} by week.`,
      );
    } catch (err) {
      if (mine === generation) say(part.status, reason(err, 'analytics:read'));
    }
  }

  async function cumulativeFlow(mine) {
    const part = parts.cfd;
    replaceChart('cfd', null);
    part.canvas.replaceChildren();
    part.table.replaceChildren();
    part.table.parentElement.hidden = true;
    if (offered(FLOW_BANDS).length < FLOW_BANDS.length) {
      say(part.status, 'This server does not offer tasks by status over time.');
      return;
    }
    say(part.status, 'Loading…');
    const grain = DAILY.test(period.value) ? 'day' : 'week';
    try {
      const answer = await api('POST', '/api/v1/query', {
        ...baseQuery(),
        metrics: FLOW_BANDS,
        dimensions: [grain, 'status'],
      });
      if (mine !== generation) return;
      const result = describeResult(answer, catalog);
      replaceChart('cfd', drawFlowChart(part.canvas, result));
      if (result.rows.length === 0) {
        say(part.status, 'No task in this period.');
        return;
      }
      renderFlowTable(part.table, result, grain);
      part.table.parentElement.hidden = false;
      const truncated = result.warnings.some((w) => w.code === 'result_truncated');
      say(
        part.status,
        `Tasks in each status at the end of each ${grain}, deleted ones left out${truncated ? '; the answer was cut at the row limit' : ''}.`,
      );
    } catch (err) {
      if (mine === generation) say(part.status, reason(err, 'analytics:read'));
    }
  }

  async function bottlenecks(mine) {
    const part = parts.bottlenecks;
    part.list.replaceChildren();
    say(part.status, 'Loading…');
    const query = new URLSearchParams({ limit: String(BOTTLENECKS) });
    if (project.value.trim()) query.set('project', project.value.trim());
    try {
      const answer = await api(
        'GET',
        `/api/v1/businesses/${encodeURIComponent(business.value)}/bottlenecks?${query}`,
      );
      if (mine !== generation) return;
      const holding = answer.data.filter((task) => task.blocked_count > 0);
      part.list.replaceChildren(...holding.map(bottleneck));
      say(
        part.status,
        holding.length === 0
          ? 'No open task holds up another.'
          : 'Open tasks holding up the most open work, at any depth.',
      );
    } catch (err) {
      if (mine === generation) say(part.status, reason(err, 'workflows:read'));
    }
  }

  function bottleneck(task) {
    const waiting = `${task.blocked_count} open task${task.blocked_count === 1 ? '' : 's'} wait${task.blocked_count === 1 ? 's' : ''} on it (${task.direct_count} directly)`;
    return el(
      'li',
      { 'data-gid': task.gid, 'data-blocked': String(task.blocked_count) },
      el('strong', {}, task.name),
      el('span', { class: `state state-${task.status}` }, statusWords(task.status)),
      task.overdue ? el('span', { class: 'state overdue' }, `overdue since ${task.due_on}`) : null,
      el('span', { class: 'tag' }, waiting),
      el(
        'button',
        { type: 'button', class: 'link', onclick: () => openTask(task.gid) },
        'Dependents',
        el('span', { class: 'visually-hidden' }, ` of ${task.name}`),
      ),
    );
  }

  async function forecast(mine) {
    const part = parts.forecast;
    part.list.replaceChildren();
    say(part.status, 'Simulating…');
    const body = {
      business: business.value,
      history: period.value,
      timezone: timeZone(),
      seed: FORECAST_SEED,
    };
    if (project.value.trim()) body.project = project.value.trim();
    try {
      const answer = await api('POST', '/api/v1/forecast', body);
      if (mine !== generation) return;
      const { open_tasks: open, throughput_per_day: pace, completion } = answer.data;
      const entry = (term, value, key) =>
        el('div', { 'data-term': key }, el('dt', {}, term), el('dd', {}, value));
      part.list.replaceChildren(
        entry('Open tasks', String(open), 'open'),
        entry('Completed a day, on average', decimal.format(pace), 'pace'),
        entry('Done by, in half of the futures', completionDay(completion.p50), 'p50'),
        entry('Done by, in 85 of 100', completionDay(completion.p85), 'p85'),
        entry('Done by, in 95 of 100', completionDay(completion.p95), 'p95'),
      );
      const notes = (answer.warnings ?? []).map((w) => w.message).join(' ');
      say(
        part.status,
        `${answer.metadata.trials.toLocaleString()} simulated futures from the throughput of ${answer.metadata.history.days} whole days.${notes ? ` ${notes}` : ''}`,
      );
    } catch (err) {
      if (mine === generation) say(part.status, reason(err, 'analytics:read'));
    }
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!catalog) {
      say(status, 'Enter a token first.');
      return;
    }
    if (!business.value) {
      say(status, 'Choose a business.');
      return;
    }
    const mine = ++generation;
    form.dataset.state = 'running';
    say(
      status,
      `Flow of ${business.value}${project.value.trim() ? ` · ${project.value.trim()}` : ''}.`,
    );
    Promise.allSettled([
      cumulativeFlow(mine),
      lines('cycle', CYCLE_TIME, mine),
      lines('aging', AGING, mine),
      bottlenecks(mine),
      forecast(mine),
    ]).then(() => {
      if (mine === generation) form.dataset.state = 'done';
    });
  });

  return {
    /** The token's businesses and the catalog are known: the form can be used. */
    prepare(businesses, knownCatalog) {
      catalog = knownCatalog;
      business.replaceChildren(...businesses.map((name) => el('option', { value: name }, name)));
      const names = knownCatalog.periods.map((p) => p.name);
      const choices = PERIODS.filter((name) => names.includes(name));
      period.replaceChildren(
        ...choices.map((name) =>
          el('option', { value: name }, labelOf(knownCatalog.periods.find((p) => p.name === name))),
        ),
      );
      period.value = choices.includes('last_90_days') ? 'last_90_days' : (choices[0] ?? '');
    },
    resize(width) {
      for (const chart of charts.values()) chart.setSize({ width, height: 300 });
    },
  };
}

/** The diagram's numbers as a table: a row a bucket, a column a status. */
function renderFlowTable(table, result, grain) {
  const { x, statuses, counts, labels } = flowSeries(result);
  table.replaceChildren(
    el('caption', {}, `Tasks in each status at the end of each ${grain}`),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col' }, grain === 'day' ? 'Day' : 'Week'),
        statuses.map((s) => el('th', { scope: 'col' }, statusWords(s))),
      ),
    ),
    el(
      'tbody',
      {},
      x.map((key, j) =>
        el(
          'tr',
          {},
          el('th', { scope: 'row' }, formatBucket(labels.get(key) ?? '', grain, result.timezone)),
          statuses.map((_, i) => el('td', {}, formatLabel(counts[i][j]))),
        ),
      ),
    ),
  );
}
