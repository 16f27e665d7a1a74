import { ApiError, api, curlFor, downloadCsv, revalidate, token } from './api.js';
import { createDependents } from './dependents.js';
import { byId, el, say } from './dom.js';
import { clearIssues, showIssues } from './field-errors.js';
import { createFlow } from './flow.js';
import { createQueryForm } from './query-form.js';
import { describeResult } from './result-model.js';
import { renderMetadata, renderWarnings } from './result-notes.js';
import { drawChart } from './results-chart.js';
import { renderTable } from './results-table.js';
import { createViews } from './views-panel.js';
import { labelOf } from './words.js';

const ui = {
  tokenForm: byId('token-form'),
  tokenInput: byId('token'),
  tokenError: byId('token-error'),
  whoami: byId('whoami'),
  queryForm: byId('query-form'),
  queryError: byId('query-error'),
  results: byId('results'),
  status: byId('status'),
  progress: byId('progress'),
  stale: byId('stale'),
  runButton: byId('run'),
  cancel: byId('cancel'),
  problem: byId('problem'),
  resultActions: byId('result-actions'),
  warnings: byId('warnings'),
  chartControls: byId('chart-controls'),
  chartMetric: byId('chart-metric'),
  chart: byId('chart'),
  chartCanvas: byId('chart-canvas'),
  chartCaption: byId('chart-caption'),
  tableWrap: byId('table-wrap'),
  table: byId('table'),
  metadata: byId('metadata'),
  metadataList: byId('metadata-list'),
  engineList: byId('engine-list'),
};

let form = null;
let catalog = null;
let lastBody = null;
let lastResult = null;
/** The last answer of `GET /api/v1/query` with its URL and ETag: a re-run revalidates it. */
let lastAnswer = null;
let chart = null;
let tokenBusinesses = [];
/** The query in flight, to cancel; a newer run cancels an older one. */
let running = null;

const urlState = () => {
  const params = new URLSearchParams(location.search);
  let body = null;
  try {
    body = params.has('q') ? JSON.parse(params.get('q')) : null;
  } catch {
    body = null;
  }
  return { body, task: params.get('task') };
};

/** `/explore?q=<query>&task=<gid>`: shareable, and never the token. */
function urlFor({ body, task }) {
  const params = new URLSearchParams();
  if (body) params.set('q', JSON.stringify(body));
  if (task) params.set('task', task);
  const search = params.toString();
  return `${location.pathname}${search ? `?${search}` : ''}`;
}

async function identify() {
  say(ui.tokenError, '');
  ui.tokenInput.removeAttribute('aria-invalid');
  try {
    const self = (await api('GET', '/api/v1/tokens/self')).data;
    const expiry = self.expires_at
      ? `expires ${new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' }).format(new Date(self.expires_at))}`
      : 'never expires';
    say(
      ui.whoami,
      `Using “${self.name}” (${self.kind.replace('_', ' ')}, ${self.rate_limit.limit} requests a minute, ${expiry}): ${self.scopes.join(', ')} on ${self.businesses.join(', ')}.`,
    );
    ui.whoami.hidden = false;
    await prepareForm(self.businesses);
  } catch (err) {
    say(ui.tokenError, err.message);
    ui.tokenInput.setAttribute('aria-invalid', 'true');
    if (err instanceof ApiError && err.status === 401) token.clear();
  }
}

async function prepareForm(businesses) {
  if (!form) {
    const [answer, openapi] = await Promise.all([
      api('GET', '/api/v1/query/catalog'),
      fetch('/openapi.json').then((res) => res.json()),
    ]);
    catalog = answer.data;
    const members =
      openapi.paths['/api/v1/query']?.post?.requestBody?.content?.['application/json']?.schema
        ?.properties ?? {};
    form = createQueryForm({ catalog, members, suggest: suggestValues });
  }
  tokenBusinesses = businesses;
  form.setBusinesses(businesses);
  flow.prepare(businesses, catalog);
  views.refresh();
  const { body, task } = urlState();
  form.write(body ?? {});
  // A link's query runs as it is; without one the ticked defaults run, so a token shows numbers.
  const query = body ?? form.read();
  if (!body && query.metrics.length > 0) {
    history.replaceState(null, '', urlFor({ body: query, task }));
  }
  if (body || query.metrics.length > 0) run(query);
  if (task) dependents.start(task);
}

/** How many businesses a type-ahead asks at most, when the form names none. */
const SUGGEST_BUSINESSES = 5;

/**
 * Values of a label dimension starting with `prefix`, the most used first: from the business
 * the form names, or from each of the token's. The businesses themselves are known here.
 */
async function suggestValues(dimension, prefix, business) {
  const names = business ? [business] : tokenBusinesses.slice(0, SUGGEST_BUSINESSES);
  const folded = prefix.toLowerCase();
  if (dimension === 'business') return names.filter((n) => n.toLowerCase().startsWith(folded));
  const query = new URLSearchParams({ prefix, limit: '10' });
  const answers = await Promise.all(
    names.map((name) =>
      api(
        'GET',
        `/api/v1/businesses/${encodeURIComponent(name)}/dimensions/${encodeURIComponent(dimension)}/values?${query}`,
      ).catch(() => ({ data: [] })),
    ),
  );
  const counts = new Map();
  for (const { value, facts } of answers.flatMap((a) => a.data)) {
    counts.set(value, (counts.get(value) ?? 0) + facts);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([value]) => value)
    .slice(0, 10);
}

async function run(body) {
  running?.abort();
  const controller = new AbortController();
  running = controller;
  lastBody = body;
  clearIssues(ui.queryForm);
  say(ui.queryError, '');
  say(ui.problem, '');
  setRunning(true);
  ui.results.dataset.state = 'running';
  say(ui.status, 'Running…');
  const started = performance.now();
  try {
    // The GET form: the same JSON the page URL keeps in `q`.
    const url = `/api/v1/query?${new URLSearchParams({ q: JSON.stringify(body) })}`;
    const answer = await revalidate(url, lastAnswer, controller.signal);
    if (running !== controller) return;
    lastAnswer = answer;
    const elapsed = performance.now() - started;
    setRunning(false);
    showResult(describeResult(lastAnswer.body, catalog), elapsed, lastAnswer.reused);
    ui.results.dataset.state = 'done';
    ui.results.dataset.reused = String(lastAnswer.reused);
    ui.results.dataset.runMs = String(Math.round(elapsed));
  } catch (err) {
    if (running !== controller) return;
    setRunning(false);
    if (err?.name === 'AbortError') {
      ui.results.dataset.state = 'cancelled';
      say(
        ui.status,
        lastResult
          ? 'Cancelled. The answer below is still the previous query’s.'
          : 'Cancelled before an answer came.',
      );
      // What is on screen answers another query: it stays marked as such.
      markStale(lastResult !== null);
      return;
    }
    ui.results.dataset.state = 'failed';
    clearResult();
    if (err instanceof ApiError && err.issues.length > 0) {
      showIssues(err.issues, fieldOfIssue, ui.queryError);
      say(ui.status, 'The server refused the query; see the marked fields.');
    } else {
      say(ui.problem, err.message);
      say(ui.status, 'The query failed.');
    }
  } finally {
    if (running === controller) running = null;
  }
}

/**
 * While a query runs: Run waits, Cancel is offered, a progress bar shows, and the answer on
 * screen (the previous query's) is dimmed and says so.
 */
function setRunning(on) {
  ui.results.setAttribute('aria-busy', String(on));
  ui.runButton.disabled = on;
  ui.cancel.hidden = !on;
  ui.progress.hidden = !on;
  markStale(on && lastResult !== null);
}

function markStale(on) {
  ui.results.classList.toggle('stale', on);
  ui.stale.hidden = !on;
}

/** A period's name for people: the catalog's label, or one made from its identifier. */
function periodLabel(name) {
  if (!name) return '';
  if (name === 'custom') return 'Date range';
  return labelOf(catalog?.periods.find((p) => p.name === name) ?? { name });
}

/** The form field of an issue: the GET form places the query's members under `["query","q"]`. */
function fieldOfIssue(loc) {
  const inQ = loc[0] === 'query' && loc[1] === 'q';
  return form.fieldFor(inQ ? ['body', ...loc.slice(2)] : loc);
}

function showResult(result, elapsed, reused) {
  lastResult = result;
  const { metadata } = result;
  const rows = metadata.row_count ?? result.rows.length;
  const unchanged = reused ? ', unchanged since the last run' : '';
  say(ui.status, `${rows} row${rows === 1 ? '' : 's'} in ${Math.round(elapsed)} ms${unchanged}.`);
  renderWarnings(ui.warnings, result.warnings);
  const current = ui.chartMetric.value;
  ui.chartMetric.replaceChildren(
    el('option', { value: '' }, 'All metrics'),
    ...result.metrics.map((m) => el('option', { value: m.name }, labelOf(m))),
  );
  ui.chartMetric.value = result.metrics.some((m) => m.name === current) ? current : '';
  ui.chartControls.hidden = result.metrics.length < 2;
  redraw();
  renderTable(ui.table, result, {
    linkFor,
    caption: `${periodLabel(metadata.query?.period?.name)} · ${metadata.query?.business ?? 'all businesses'}`,
  });
  ui.tableWrap.hidden = false;
  ui.resultActions.hidden = false;
  renderMetadata(ui.metadataList, ui.engineList, result, {
    roundTripMs: elapsed,
    periodLabel: periodLabel(metadata.query?.period?.name),
  });
  ui.metadata.hidden = false;
}

/** An answer that no longer matches the form is not left on screen. */
function clearResult() {
  lastResult = null;
  markStale(false);
  redraw();
  ui.chartControls.hidden = true;
  ui.tableWrap.hidden = true;
  ui.resultActions.hidden = true;
  ui.metadata.hidden = true;
  ui.warnings.replaceChildren();
}

function redraw() {
  chart?.destroy();
  chart = lastResult ? drawChart(ui.chartCanvas, lastResult, ui.chartMetric.value) : null;
  ui.chart.hidden = chart === null;
  if (chart) {
    const kind = lastResult.timeDimension ? 'Lines over time' : 'Bars';
    const before = lastResult.timeDimension ? 'dashed' : 'faint bars';
    const chosen = lastResult.metrics.filter(
      (m) => !ui.chartMetric.value || m.name === ui.chartMetric.value,
    );
    const names = chosen.map(labelOf).join(', ');
    const parts = [
      `${kind}: ${names}`,
      ...(lastResult.compared ? [`${before}: the comparison period`] : []),
      ...(lastResult.timeDimension && lastResult.rows.some(lastResult.isIncomplete)
        ? ['dotted: periods not over yet']
        : []),
      ...(lastResult.timeDimension && lastResult.labelDimensions.length > 0
        ? ['a bucket without a row counts 0; a rate or an average breaks there']
        : []),
      ...chart.notes,
    ];
    ui.chartCaption.textContent = `${parts.join('; ')}.`;
  }
}

/** The last query narrowed to one label: filtered on it, broken down by what else it had. */
function linkFor(dimension, value) {
  const body = structuredClone(lastBody);
  body.filters = [
    ...(body.filters ?? []).filter((f) => f.dimension !== dimension),
    { dimension, op: 'eq', values: [value] },
  ];
  body.dimensions = (body.dimensions ?? []).filter((d) => d !== dimension);
  if (body.dimensions.length === 0 && catalog.dimensions.some((d) => d.name === 'day')) {
    body.dimensions = ['day'];
  }
  return urlFor({ body, task: urlState().task });
}

function navigate(href) {
  history.pushState(null, '', href);
  const { body } = urlState();
  if (body) {
    form.write(body);
    run(body);
  }
}

const dependents = createDependents({
  onTask: (task) => history.replaceState(null, '', urlFor({ body: urlState().body, task })),
});
// A saved view opens as a link to its query would: in the form, run at once.
const views = createViews({
  current: () => (form ? form.read() : null),
  open: (query) => {
    history.pushState(null, '', urlFor({ body: query, task: urlState().task }));
    form.write(query);
    run(query);
    ui.results.focus();
  },
});
// A bottleneck opens in the dependents browser, which is where the eye goes next.
const flow = createFlow({
  openTask: (gid) => {
    dependents.start(gid);
    byId('dependents-heading').scrollIntoView({ block: 'start' });
  },
});

ui.tokenForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const value = ui.tokenInput.value.trim();
  if (value === '') {
    say(ui.tokenError, 'Paste an API token first.');
    return;
  }
  token.set(value);
  ui.tokenInput.value = '';
  identify();
});
// A pasted token is used at once: nothing else goes in that field.
ui.tokenInput.addEventListener('paste', () => {
  setTimeout(() => {
    if (ui.tokenInput.value.trim() !== '') ui.tokenForm.requestSubmit();
  });
});
ui.cancel.addEventListener('click', () => running?.abort());
byId('forget-token').addEventListener('click', () => {
  token.clear();
  say(ui.whoami, 'Token forgotten. Paste an API token to begin.');
});
ui.queryForm.addEventListener('submit', (event) => {
  event.preventDefault();
  if (!form) {
    say(ui.queryError, 'Enter a token first.');
    return;
  }
  const body = form.read();
  history.pushState(null, '', urlFor({ body, task: urlState().task }));
  run(body);
});
byId('copy-curl').addEventListener('click', async () => {
  if (!form) return;
  const text = curlFor('POST', '/api/v1/query', form.read());
  say(byId('curl'), text);
  try {
    await navigator.clipboard.writeText(text);
    say(ui.status, 'Copied the request as curl; it reads the token from $CAIRN_TOKEN.');
  } catch {
    say(ui.status, 'Select the request below to copy it; it reads the token from $CAIRN_TOKEN.');
  }
});
ui.table.addEventListener('click', (event) => {
  const link = event.target.closest('a[data-filter]');
  if (!link || event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
  event.preventDefault();
  navigate(link.getAttribute('href'));
});
ui.chartMetric.addEventListener('change', redraw);
byId('download-csv').addEventListener('click', async () => {
  if (!lastAnswer) return;
  say(ui.problem, '');
  try {
    const name = await downloadCsv(lastAnswer.url);
    say(ui.status, `Saved the answer as ${name}.`);
  } catch (err) {
    say(ui.problem, `The CSV download failed: ${err.message}`);
  }
});
window.addEventListener('popstate', () => {
  const { body } = urlState();
  if (form && body) {
    form.write(body);
    run(body);
  }
});
new ResizeObserver(() => {
  if (chart) chart.setSize({ width: Math.max(280, ui.chartCanvas.clientWidth), height: 300 });
}).observe(ui.chartCanvas);
new ResizeObserver(() => {
  flow.resize(Math.max(280, byId('cfd-canvas').clientWidth));
}).observe(byId('cfd-canvas'));
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', redraw);

if (token.get()) identify();
else {
  // A shared link carries the query, never the token: say why nothing runs yet.
  const { body, task } = urlState();
  if (body || task) {
    const what = body && task ? 'a query and a task' : body ? 'a query' : 'a task';
    const needed = `This link holds ${what}; a token is needed to run it. Paste an API token above: it stays in this tab only.`;
    say(ui.whoami, needed);
    say(ui.status, 'Waiting for a token to run the query from the link.');
    ui.results.dataset.state = 'needs-token';
  }
}
