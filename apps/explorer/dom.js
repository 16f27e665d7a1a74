/** Builds an element: attributes (`on*` become listeners) and children (strings are text). */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else if (name === 'text') node.textContent = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  node.append(...children.flat().filter((child) => child !== null && child !== undefined));
  return node;
}

export const byId = (id) => document.getElementById(id);

export function show(node, visible) {
  node.hidden = !visible;
}

/** A paragraph that says something, or nothing and hidden. */
export function say(node, text) {
  node.textContent = text ?? '';
  node.hidden = !text;
}
