// The page's two DOM helpers, shared by its modules.

export const $ = (id) => document.getElementById(id);

export function make(tag, attrs = {}, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}
