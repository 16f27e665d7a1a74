import { ApiError, api } from './api.js';
import { byId, el, say } from './dom.js';
import { formatLabel } from './format.js';

const PAGE_SIZE = 10;
const FIELDS = 'status,assignee,project';
/** A name search's fields: a match is told apart by its business and status too. */
const SEARCH_FIELDS = 'business,status,project';
/**
 * What Cairn issues as a task's gid (a UUID): only text of that shape is looked up as an ID.
 * Anything else is a name to search for, never tried as an ID first (which would cost a 404).
 */
const TASK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The shortest text the task list's name search (`q`) takes. */
const MIN_SEARCH = 3;

const WORDS = {
  dependents: {
    one: 'dependent',
    many: 'dependents',
    walk: 'Dependents',
    none: 'No task depends on this one.',
  },
  dependencies: {
    one: 'dependency',
    many: 'dependencies',
    walk: 'Dependencies',
    none: 'This task waits for no task.',
  },
};

/**
 * The dependents browser: a task (by gid, or found by name) and the tasks it holds up or waits
 * for, directly or at any depth, filtered by status, a page at a time (following
 * `next_offset`), and a click on any of them to walk on. `onTask` hears the task shown.
 */
export function createDependents({ onTask }) {
  const form = byId('dependents-form');
  const input = byId('task-gid');
  const direction = byId('dependents-direction');
  const depth = byId('dependents-depth');
  const statusFilter = byId('dependents-filter');
  const showButton = byId('dependents-show');
  const error = byId('task-error');
  const status = byId('dependents-status');
  const list = byId('dependents-list');
  const trailNav = byId('trail');
  const next = byId('dependents-next');
  const first = byId('dependents-first');
  let trail = [];
  let page = { gid: null, number: 1, nextOffset: null };
  /** Only the latest request may draw: an earlier one answering late is dropped. */
  let generation = 0;

  const words = () => WORDS[direction.value];

  const clear = (message) => {
    list.replaceChildren();
    next.hidden = true;
    first.hidden = true;
    say(status, message);
  };

  const fail = (message) => {
    say(error, message);
    input.setAttribute('aria-invalid', 'true');
    clear('');
  };

  const explain = (err) => {
    const issues = err instanceof ApiError ? err.issues : [];
    return issues.length > 0
      ? issues.map((i) => `${i.loc.at(-1)}: ${i.msg}`).join('\n')
      : err.message;
  };

  async function load(gid, offset, number) {
    const mine = ++generation;
    say(error, '');
    input.removeAttribute('aria-invalid');
    if (number === 1) clear('Loading…');
    else say(status, 'Loading…');
    const query = new URLSearchParams({ limit: String(PAGE_SIZE), opt_fields: FIELDS });
    if (depth.value === 'all') query.set('depth', 'all');
    if (statusFilter.value) query.set('status', statusFilter.value);
    if (offset) query.set('offset', offset);
    try {
      const answer = await api(
        'GET',
        `/api/v1/tasks/${encodeURIComponent(gid)}/${direction.value}?${query}`,
      );
      if (mine !== generation) return false;
      page = { gid, number, nextOffset: answer.pagination?.next_offset ?? null };
      render(answer);
      return true;
    } catch (err) {
      if (mine !== generation) return false;
      fail(
        err instanceof ApiError && err.status === 404
          ? `No task has the ID “${gid}”.`
          : explain(err),
      );
      return false;
    }
  }

  function item(task) {
    const { walk } = words();
    const name = task.name ?? task.gid;
    return el(
      'li',
      { 'data-gid': task.gid, 'data-depth': String(task.depth ?? 1) },
      el('strong', {}, name),
      el('span', { class: 'depth' }, `depth ${task.depth ?? 1}`),
      el('span', { class: `state state-${task.status}` }, formatLabel(task.status)),
      el('span', { class: 'tag' }, `${formatLabel(task.assignee)} · ${formatLabel(task.project)}`),
      el('span', { class: 'gid' }, task.gid),
      // The visible word is the start of the accessible name, so speech input finds it.
      el(
        'button',
        { type: 'button', class: 'link', onclick: () => open(task.gid, task.name) },
        walk,
        el('span', { class: 'visually-hidden' }, ` of ${name}`),
      ),
    );
  }

  /** At any depth, the page's tasks grouped by how far they are, each group folding away. */
  function grouped(tasks) {
    const byDepth = new Map();
    for (const task of tasks) {
      const depthOf = task.depth ?? 1;
      byDepth.set(depthOf, [...(byDepth.get(depthOf) ?? []), task]);
    }
    const { one, many } = words();
    return [...byDepth]
      .sort((a, b) => a[0] - b[0])
      .map(([depthOf, members]) =>
        el(
          'li',
          { class: 'depth-group', 'data-group-depth': String(depthOf) },
          el(
            'details',
            { open: true },
            el(
              'summary',
              {},
              `${depthOf === 1 ? 'Directly linked' : `${depthOf} links away`}: ${members.length} ${members.length === 1 ? one : many}`,
            ),
            el('ul', {}, members.map(item)),
          ),
        ),
      );
  }

  function render(answer) {
    const { one, many, none } = words();
    list.replaceChildren(...(depth.value === 'all' ? grouped(answer.data) : answer.data.map(item)));
    const shown = answer.data.length;
    const more = answer.pagination?.has_more === true;
    const filtered = statusFilter.value ? ` ${statusFilter.value}` : '';
    const deep = depth.value === 'all' ? ' at any depth' : '';
    say(
      status,
      shown === 0 && page.number === 1
        ? filtered || deep
          ? `No${filtered} ${many}${deep}.`
          : none
        : `Page ${page.number}: ${shown}${filtered} ${shown === 1 ? one : many}${deep}${more ? '; more follow' : ''}.`,
    );
    next.hidden = !more;
    first.hidden = page.number === 1;
  }

  function renderTrail() {
    trailNav.replaceChildren(
      ...trail.flatMap((step, i) => [
        ...(i > 0 ? [el('span', { 'aria-hidden': 'true' }, '›')] : []),
        el(
          'button',
          {
            type: 'button',
            class: 'link',
            'aria-current': i === trail.length - 1 ? 'page' : undefined,
            onclick: () => {
              trail = trail.slice(0, i + 1);
              show(step.gid);
            },
          },
          step.name ?? step.gid,
        ),
      ]),
    );
  }

  async function show(gid) {
    input.value = gid;
    renderTrail();
    if (await load(gid, null, 1)) onTask(gid);
  }

  /** Walks on to `gid` (from a click or the form). */
  function open(gid, name) {
    trail.push({ gid, name });
    show(gid);
  }

  /** Starts from a task picked anew: the trail and the last list go. */
  function begin(gid, name) {
    trail = [];
    open(gid, name);
  }

  /** Tasks whose name contains `text`; one is opened, several are offered to pick from. */
  async function search(text) {
    const mine = ++generation;
    const query = new URLSearchParams({
      q: text,
      per_page: '10',
      sort: 'name',
      order: 'asc',
      opt_fields: SEARCH_FIELDS,
    });
    let answer;
    try {
      answer = await api('GET', `/api/v1/tasks?${query}`);
    } catch (err) {
      if (mine === generation) fail(explain(err));
      return;
    }
    if (mine !== generation) return;
    const found = answer.data;
    if (found.length === 0) {
      fail(`No task’s name contains “${text}” (a task ID is a UUID).`);
      return;
    }
    if (found.length === 1) {
      begin(found[0].gid, found[0].name);
      return;
    }
    const total = answer.meta?.total ?? found.length;
    trailNav.replaceChildren();
    list.replaceChildren(
      ...found.map((task) =>
        el(
          'li',
          { 'data-gid': task.gid, class: 'match' },
          el(
            'button',
            { type: 'button', class: 'link', onclick: () => begin(task.gid, task.name) },
            task.name,
          ),
          el('span', { class: `state state-${task.status}` }, formatLabel(task.status)),
          el('span', { class: 'tag' }, `${task.business} · ${formatLabel(task.project)}`),
          el('span', { class: 'gid' }, task.gid),
        ),
      ),
    );
    say(
      status,
      `${total} tasks have “${text}” in their name${total > found.length ? `; the first ${found.length} are listed` : ''}: pick one.`,
    );
  }

  async function find(text) {
    say(error, '');
    input.removeAttribute('aria-invalid');
    // The last task's list and trail go at once: they no longer answer what was asked.
    clear('Looking for the task…');
    trail = [];
    trailNav.replaceChildren();
    if (!TASK_ID.test(text)) {
      if (text.length < MIN_SEARCH) {
        fail(`Enter a task ID, or at least ${MIN_SEARCH} characters of a task's name.`);
        return;
      }
      await search(text);
      return;
    }
    await openById(text);
  }

  /** A task by its ID: its name for the trail, then its list. */
  async function openById(gid) {
    const mine = ++generation;
    try {
      const task = (await api('GET', `/api/v1/tasks/${encodeURIComponent(gid)}?opt_fields=status`))
        .data;
      if (mine === generation) begin(task.gid, task.name);
    } catch (err) {
      if (mine !== generation) return;
      fail(
        err instanceof ApiError && err.status === 404
          ? `No task has the ID “${gid}”.`
          : explain(err),
      );
    }
  }

  const relabel = () => {
    showButton.textContent = `Show ${direction.value}`;
  };
  direction.addEventListener('change', relabel);
  relabel();

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (text === '') {
      fail('Enter the ID or the name of a task.');
      return;
    }
    find(text);
  });
  next.addEventListener('click', () => {
    if (page.nextOffset) load(page.gid, page.nextOffset, page.number + 1);
  });
  first.addEventListener('click', () => load(page.gid, null, 1));

  return {
    /** Opens a task from the URL. */
    start(gid) {
      input.value = gid;
      clear('Looking for the task…');
      openById(gid);
    },
  };
}
