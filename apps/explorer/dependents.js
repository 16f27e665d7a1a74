import { ApiError, api } from './api.js';
import { byId, el, say } from './dom.js';
import { formatLabel } from './format.js';

const PAGE_SIZE = 10;
const FIELDS = 'status,assignee,project';

/**
 * The dependents browser: a task's dependents a page at a time (following `next_offset`), and
 * a click on any of them to walk on to its own dependents. `onTask` hears the task shown.
 */
export function createDependents({ onTask }) {
  const form = byId('dependents-form');
  const input = byId('task-gid');
  const error = byId('task-error');
  const status = byId('dependents-status');
  const list = byId('dependents-list');
  const trailNav = byId('trail');
  const next = byId('dependents-next');
  const first = byId('dependents-first');
  let trail = [];
  let page = { gid: null, number: 1, nextOffset: null };

  const fail = (err) => {
    const issues = err instanceof ApiError ? err.issues : [];
    say(
      error,
      issues.length > 0
        ? issues.map((i) => `${i.loc.join(' › ')}: ${i.msg}`).join('\n')
        : err.message,
    );
    input.setAttribute('aria-invalid', 'true');
    say(status, '');
  };

  async function load(gid, offset, number) {
    say(error, '');
    input.removeAttribute('aria-invalid');
    say(status, 'Loading…');
    const query = new URLSearchParams({ limit: String(PAGE_SIZE), opt_fields: FIELDS });
    if (offset) query.set('offset', offset);
    try {
      const answer = await api(
        'GET',
        `/api/v1/tasks/${encodeURIComponent(gid)}/dependents?${query}`,
      );
      page = { gid, number, nextOffset: answer.pagination?.next_offset ?? null };
      render(answer);
      return true;
    } catch (err) {
      fail(err);
      return false;
    }
  }

  function render(answer) {
    list.replaceChildren(
      ...answer.data.map((task) =>
        el(
          'li',
          { 'data-gid': task.gid },
          el('strong', {}, task.name ?? task.gid),
          el(
            'span',
            { class: 'tag' },
            `${formatLabel(task.status)} · ${formatLabel(task.assignee)} · ${formatLabel(task.project)}`,
          ),
          el('span', { class: 'gid' }, task.gid),
          el(
            'button',
            {
              type: 'button',
              class: 'link',
              'aria-label': `Dependents of ${task.name ?? task.gid}`,
              onclick: () => open(task.gid, task.name),
            },
            'Its dependents',
          ),
        ),
      ),
    );
    const shown = answer.data.length;
    const more = answer.pagination?.has_more === true;
    say(
      status,
      shown === 0 && page.number === 1
        ? 'No task depends on this one.'
        : `Page ${page.number}: ${shown} dependent${shown === 1 ? '' : 's'}${more ? '; more follow' : ''}.`,
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

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const gid = input.value.trim();
    if (gid === '') {
      say(error, 'Enter the ID of a task.');
      return;
    }
    trail = [];
    open(gid, undefined);
    // The name arrives with the task itself; the trail shows the ID until then.
    api('GET', `/api/v1/tasks/${encodeURIComponent(gid)}`)
      .then((answer) => {
        const step = trail.find((s) => s.gid === gid);
        if (step) step.name = answer.data.name;
        renderTrail();
      })
      .catch(() => {});
  });
  next.addEventListener('click', () => {
    if (page.nextOffset) load(page.gid, page.nextOffset, page.number + 1);
  });
  first.addEventListener('click', () => load(page.gid, null, 1));

  return {
    /** Opens a task from the URL. */
    start(gid) {
      input.value = gid;
      form.requestSubmit();
    },
  };
}
