import { ApiError, api } from './api.js';
import { byId, el, say } from './dom.js';

const LIST_SIZE = 50;
const DEFAULT_EXPIRY_DAYS = 30;

/** What a refused write says: the API's words, or the scope the token lacks. */
function reason(err) {
  if (err instanceof ApiError && err.status === 403) {
    return 'This token cannot save or change views (it needs analytics:write).';
  }
  return err.message;
}

/** An iframe that shows the embed, for the page that will hold it. */
export function iframeSnippet(url) {
  const src = new URL(url, location.origin).href;
  return `<iframe src="${src}" width="800" height="600" style="border:0" title="Cairn chart"></iframe>`;
}

/**
 * Saved views: the query on screen saved under a name, the token's views listed to open again,
 * and for each an embed to create (its iframe snippet to copy) and to revoke. `current()` gives
 * the query the form holds; `open(query)` shows a view's query in the form and runs it.
 */
export function createViews({ current, open }) {
  const saveForm = byId('view-save-form');
  const nameInput = byId('view-name');
  const status = byId('views-status');
  const list = byId('views-list');
  const embedPanel = byId('embed-panel');
  const embedForm = byId('embed-form');
  const embedTitle = byId('embed-title');
  const expiry = byId('embed-expiry');
  const origins = byId('embed-origins');
  const lock = byId('embed-lock');
  const snippet = byId('embed-snippet');
  const embedStatus = byId('embed-status');
  const embedList = byId('embeds-list');
  let embedding = null;

  async function refresh() {
    try {
      const answer = await api('GET', `/api/v1/views?per_page=${LIST_SIZE}`);
      list.replaceChildren(...answer.data.map(item));
      if (answer.data.length === 0) say(status, 'No saved view yet.');
      return answer.data;
    } catch (err) {
      say(status, err.message);
      return [];
    }
  }

  function item(view) {
    const name = view.name;
    return el(
      'li',
      { 'data-view': view.id },
      el('strong', {}, name),
      el('span', { class: 'tag' }, view.businesses?.join(', ') ?? view.business ?? ''),
      el(
        'button',
        { type: 'button', class: 'link', onclick: () => open(view.query) },
        'Open',
        el('span', { class: 'visually-hidden' }, ` ${name}`),
      ),
      el(
        'button',
        { type: 'button', class: 'link', onclick: () => startEmbed(view) },
        'Embed',
        el('span', { class: 'visually-hidden' }, ` ${name}`),
      ),
      el(
        'button',
        { type: 'button', class: 'link', onclick: () => remove(view) },
        'Delete',
        el('span', { class: 'visually-hidden' }, ` ${name}`),
      ),
    );
  }

  async function remove(view) {
    try {
      await api('DELETE', `/api/v1/views/${encodeURIComponent(view.id)}`);
      if (embedding?.id === view.id) embedPanel.hidden = true;
      say(status, `Deleted “${view.name}”.`);
      await refresh();
    } catch (err) {
      say(status, reason(err));
    }
  }

  async function startEmbed(view) {
    embedding = view;
    embedPanel.hidden = false;
    embedTitle.textContent = `Embeds of “${view.name}”`;
    expiry.value = String(DEFAULT_EXPIRY_DAYS);
    origins.value = '';
    lock.checked = true;
    lock.disabled = (view.query.filters ?? []).length === 0;
    snippet.hidden = true;
    say(embedStatus, '');
    await listEmbeds();
    embedTitle.focus();
  }

  async function listEmbeds() {
    if (!embedding) return;
    try {
      const answer = await api('GET', `/api/v1/views/${encodeURIComponent(embedding.id)}/embeds`);
      embedList.replaceChildren(...answer.data.map(embedItem));
    } catch (err) {
      say(embedStatus, reason(err));
    }
  }

  function embedItem(embed) {
    const until = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' }).format(
      new Date(embed.expires_at),
    );
    const where = embed.allowed_origins?.length ? embed.allowed_origins.join(', ') : 'no page';
    return el(
      'li',
      { 'data-embed': embed.id, 'data-state': embed.state },
      el('span', { class: `state state-${embed.state}` }, embed.state),
      el('span', { class: 'tag' }, `until ${until}; framed by ${where}`),
      embed.state === 'active'
        ? el(
            'button',
            { type: 'button', class: 'link', onclick: () => revoke(embed) },
            'Revoke',
            el('span', { class: 'visually-hidden' }, ` embed ${embed.id}`),
          )
        : null,
    );
  }

  async function revoke(embed) {
    try {
      await api(
        'DELETE',
        `/api/v1/views/${encodeURIComponent(embedding.id)}/embeds/${encodeURIComponent(embed.id)}`,
      );
      say(embedStatus, 'Revoked: the embed answers nothing from now on.');
      await listEmbeds();
    } catch (err) {
      say(embedStatus, reason(err));
    }
  }

  saveForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const name = nameInput.value.trim();
    const query = current();
    if (!query) {
      say(status, 'Enter a token first.');
      return;
    }
    if (name === '') {
      say(status, 'Give the view a name.');
      nameInput.setAttribute('aria-invalid', 'true');
      return;
    }
    nameInput.removeAttribute('aria-invalid');
    try {
      const saved = (await api('POST', '/api/v1/views', { name, query })).data;
      nameInput.value = '';
      say(status, `Saved as “${saved.name}”.`);
      await refresh();
    } catch (err) {
      say(status, reason(err));
    }
  });

  embedForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!embedding) return;
    const body = { expires_in_days: Number(expiry.value) };
    const allowed = origins.value
      .split(/[\s,]+/)
      .map((origin) => origin.trim())
      .filter(Boolean);
    if (allowed.length > 0) body.allowed_origins = allowed;
    // Locking the view's own filters keeps a viewer from widening what it shows.
    const filters = embedding.query.filters ?? [];
    if (lock.checked && filters.length > 0) body.locked_filters = filters;
    try {
      const embed = (
        await api('POST', `/api/v1/views/${encodeURIComponent(embedding.id)}/embeds`, body)
      ).data;
      say(snippet, iframeSnippet(embed.url));
      try {
        await navigator.clipboard.writeText(snippet.textContent);
        say(embedStatus, 'Created; the iframe snippet below is copied.');
      } catch {
        say(embedStatus, 'Created; copy the iframe snippet below. Its token is shown only now.');
      }
      await listEmbeds();
    } catch (err) {
      say(embedStatus, reason(err));
    }
  });

  return { refresh };
}
