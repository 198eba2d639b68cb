// The elements of index.html. They are there by construction: one missing is a typo in the
// code, said at once and by name rather than later as "cannot read properties of null".

/**
 * The element with this id.
 * @param {string} id
 * @returns {HTMLElement}
 */
export function byId(id) {
  const element = document.getElementById(id);
  if (!element) throw new Error(`index.html has no #${id}`);
  return element;
}

/**
 * The first element matching a CSS selector.
 * @param {string} selector
 * @returns {HTMLElement}
 */
export function query(selector) {
  const element = document.querySelector(selector);
  if (!(element instanceof HTMLElement)) throw new Error(`index.html has no ${selector}`);
  return element;
}
