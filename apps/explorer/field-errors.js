import { el, say } from './dom.js';

const CONTROLS = 'input, select, textarea';

/** Removes every message and invalid mark that showIssues put in `scope`. */
export function clearIssues(scope) {
  for (const node of scope.querySelectorAll('.field-error.from-api')) node.remove();
  for (const node of scope.querySelectorAll('[aria-invalid]')) {
    node.removeAttribute('aria-invalid');
    const describedBy = (node.getAttribute('aria-describedby') ?? '')
      .split(' ')
      .filter((id) => id && !id.startsWith('api-error-'));
    if (describedBy.length > 0) node.setAttribute('aria-describedby', describedBy.join(' '));
    else node.removeAttribute('aria-describedby');
  }
}

let ids = 0;

/**
 * Puts each 422 issue's `msg`, as the API words it, beside the control at its `loc`; issues
 * with no control of their own go to `fallback` with their location spelled out.
 */
export function showIssues(issues, fieldFor, fallback) {
  const unplaced = [];
  for (const issue of issues) {
    const field = fieldFor(issue.loc);
    if (!field) {
      unplaced.push(`${issue.loc.join(' › ')}: ${issue.msg}`);
      continue;
    }
    const id = `api-error-${++ids}`;
    const message = el('p', { id, class: 'field-error from-api', 'data-loc': issue.loc.join('.') });
    message.textContent = issue.msg;
    field.append(message);
    const controls = field.matches(CONTROLS) ? [field] : [...field.querySelectorAll(CONTROLS)];
    for (const control of controls) {
      control.setAttribute('aria-invalid', 'true');
      const describedBy = control.getAttribute('aria-describedby');
      control.setAttribute('aria-describedby', describedBy ? `${describedBy} ${id}` : id);
    }
  }
  say(fallback, unplaced.join('\n'));
  const first = issues.length > 0 ? fieldFor(issues[0].loc) : null;
  (first?.querySelector(CONTROLS) ?? first ?? fallback).focus?.();
}
