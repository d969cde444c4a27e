/** dom.ts: text always goes in as text, never as HTML. */
import { badge, code, h, plural, setChildren, when, yes } from '../src/dom';

const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';

describe('h', () => {
  it('puts strings in as text nodes, never as markup', () => {
    const el = h('div', { class: 'x', title: HOSTILE }, HOSTILE, 42);
    expect(el.textContent).toBe(HOSTILE + '42');
    expect(el.querySelector('img, script')).toBeNull();
    expect(el.getAttribute('title')).toBe(HOSTILE);
  });

  it('sets attributes, skips empty ones and binds listeners', () => {
    let clicked = 0;
    const el = h('button', { 'data-testid': 't', disabled: false, hidden: true, onclick: () => clicked++ }, 'go');
    el.click();
    expect(clicked).toBe(1);
    expect(el.hasAttribute('disabled')).toBe(false);
    expect(el.getAttribute('hidden')).toBe('');
    expect(el.getAttribute('onclick')).toBeNull();
  });

  it('replaces children with setChildren', () => {
    const el = h('div', {}, 'old');
    setChildren(el, h('b', {}, 'new'), null, 'text');
    expect(el.innerHTML).toBe('<b>new</b>text');
  });
});

describe('code', () => {
  it('lets a long name wrap after its underscores, keeping its text', () => {
    const el = code('can_request_human_approval');
    expect(el.textContent).toBe('can_request_human_approval');
    expect(el.querySelectorAll('wbr')).toHaveLength(3);
  });

  it('keeps markup in code as text', () => {
    const el = code(HOSTILE);
    expect(el.textContent).toBe(HOSTILE);
    expect(el.querySelector('img, script')).toBeNull();
  });
});

describe('small helpers', () => {
  it('writes times in UTC to the minute', () => {
    expect(when(Date.UTC(2026, 10, 29, 19, 42, 5))).toBe('2026-11-29 19:42 UTC');
    expect(when(null)).toBe('');
    expect(when('not a time')).toBe('not a time');
  });

  it('counts with the right plural', () => {
    expect(plural(1, 'reply', 'replies')).toBe('1 reply');
    expect(plural(2, 'line')).toBe('2 lines');
  });

  it('colours yes and no by the good answer', () => {
    expect(yes(true).className).toBe('dsh-yes');
    expect(yes(true, false).className).toBe('dsh-no');
    expect(yes(false, true, true).className).toBe('dsh-muted');
    expect(badge('withdrawn', 'error').className).toContain('dsh-badge-error');
  });
});
