/**
 * A tiny DOM builder for the panel and the record renderer: text always goes in as text
 * nodes (never as HTML), so a title, a note or a server message cannot inject markup.
 */

export type Child = Node | string | number | null | undefined | false;

export interface IAttrs {
  [key: string]: string | number | boolean | null | undefined | EventListener;
}

/** `h('div', {class: 'x', 'data-testid': 'y', onclick: fn}, 'text', child)` */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: IAttrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) {
      continue;
    }
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value as EventListener);
    } else if (value === true) {
      el.setAttribute(key, '');
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, ...children);
  return el;
}

export function append(el: HTMLElement, ...children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    el.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace an element's children. */
export function setChildren(el: HTMLElement, ...children: (Child | Child[])[]): void {
  el.replaceChildren();
  append(el, ...children);
}

/** `1795978924250` -> `2026-11-29 19:42 UTC`; `null` -> ''. */
export function when(value: number | string | null | undefined): string {
  if (value === null || value === undefined || value === '') {
    return '';
  }
  const d = new Date(value);
  if (isNaN(d.getTime())) {
    return String(value);
  }
  return d.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
}

/** A coloured yes/no. */
/**
 * `yes` / `no`, green when `value` is the `good` answer and red otherwise (`no` is the good answer
 * to has_unresolved_objections); grey when `neutral` (an expected answer, not a fault).
 */
export function yes(value: boolean, good = true, neutral = false): HTMLElement {
  return h('span', { class: neutral ? 'dsh-muted' : value === good ? 'dsh-yes' : 'dsh-no' }, value ? 'yes' : 'no');
}

/** A small pill. */
export function badge(text: string, kind = ''): HTMLElement {
  return h('span', { class: `dsh-badge ${kind ? 'dsh-badge-' + kind : ''}` }, text);
}

/** Characters after which code may wrap in a narrow panel (never inside a name's letters). */
const CODE_BREAK = /([_/*+^(,])/;

/**
 * A `<code>` element whose text may wrap after `_`, `/`, `*`, `+`, `^`, `(` and `,` (a
 * `<wbr>` after each), so `can_request_human_approval` wraps at an underscore in a narrow
 * sidebar instead of mid-word; text still goes in as text nodes.
 */
export function code(text: string, attrs: IAttrs = {}): HTMLElement {
  const el = h('code', attrs);
  for (const part of String(text).split(CODE_BREAK)) {
    if (!part) {
      continue;
    }
    el.appendChild(document.createTextNode(part));
    if (CODE_BREAK.test(part) && part.length === 1) {
      el.appendChild(document.createElement('wbr'));
    }
  }
  return el;
}

/** `plural(1, 'reply', 'replies')` -> `1 reply`; `plural(2, 'line')` -> `2 lines`. */
export function plural(n: number, one: string, many = one + 's'): string {
  return `${n} ${n === 1 ? one : many}`;
}
