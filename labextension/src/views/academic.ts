/**
 * The Academic tab (spec: academic.md "State and surface"; issue 22, item 5: one view per tab):
 * the toggle, looking like the notebook widget (an outline when off, the theme's brand colour
 * when on), what the mode does, the last shaped request, the delivery gate and the last error.
 * It draws the model's `IAcademicState`; a click asks the model to switch.
 */

import type { IAcademicStatus } from '../api';
import { h, when } from '../dom';
import type { Trans } from '../i18n';
import type { IAcademicState } from '../model';

/** The academic label without CJK (which draws as boxes where no CJK font is installed). */
export const ACADEMIC_LABEL = 'Academic mode';

/** `0` -> `sent back no reply yet`; `1` -> `sent back 1 long reply for a verification log`. */
export function gateText(count: number | null | undefined, trans: Trans): string {
  const n = count ?? 0;
  return n
    ? trans._n('sent back %1 long reply for a verification log', 'sent back %1 long replies for a verification log', n)
    : trans.__('sent back no reply yet');
}

/**
 * The academic toggle's tooltip: the notebook widget's (widgets/academic.py) with the mode's
 * Chinese title up front (the button itself says "Academic mode") and "sent back 1 reply"
 * for its "repl(ies)".
 */
export function academicTooltip(st: IAcademicStatus, trans: Trans): string {
  const title = st.title || '学术模式';
  const parts = [
    st.enabled
      ? trans.__('%1 (%2) is on', trans.__(ACADEMIC_LABEL), title)
      : trans.__('%1 (%2) is off', trans.__(ACADEMIC_LABEL), title)
  ];
  const a = st.applied;
  if (a) {
    parts.push(
      trans.__(
        'last shaped request: %1/%2, reasoning effort %3, max_tokens %4 (%5)',
        a.provider,
        a.model,
        a.reasoningEffort || 'none',
        a.maxTokens,
        a.at
      )
    );
  }
  parts.push(trans.__('delivery gate %1', gateText(st.gate?.count, trans)));
  if (st.lastError) {
    parts.push(trans.__('last error: %1', st.lastError));
  }
  return parts.join(' · ');
}

export function academicKey(state: IAcademicState): string {
  return JSON.stringify(state);
}

/** A graduation cap (the notebook widget's icon), drawn without an icon font. */
function capIcon(): HTMLElement {
  const span = h('span', { class: 'dsh-academic-icon', 'aria-hidden': 'true' });
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', 'M12 3 1 9l11 6 9-4.9V17h2V9zM5 13.2v4L12 21l7-3.8v-4L12 17z');
  svg.appendChild(path);
  span.appendChild(svg);
  return span;
}

/** The Academic view's content; `toggle` switches the mode. */
export function renderAcademic(state: IAcademicState, toggle: () => void, trans: Trans): Node[] {
  const st = state.status;
  if (!st) {
    return [];
  }
  const on = !!st.enabled;
  const button = h(
    'button',
    {
      class: `dsh-academic-toggle ${on ? 'dsh-academic-on' : ''}`,
      'data-testid': 'dsh-academic-toggle',
      'data-enabled': String(on),
      'aria-pressed': String(on),
      title: academicTooltip(st, trans),
      disabled: state.busy,
      onclick: () => toggle()
    },
    capIcon(),
    ` ${trans.__(ACADEMIC_LABEL)}`,
    h('span', { class: 'dsh-academic-state' }, on ? trans.__('on') : trans.__('off'))
  );
  const a = st.applied;
  const gate = st.gate;
  return [
    h(
      'div',
      { class: 'dsh-academic' },
      button,
      h(
        'div',
        { class: 'dsh-muted', 'data-testid': 'dsh-academic-status' },
        on
          ? trans.__(
              'On: model calls are shaped for academic work from the next request on (every kernel reads the same switch).'
            )
          : trans.__('Off: model calls go out as configured.')
      ),
      a
        ? h(
            'div',
            { class: 'dsh-muted' },
            trans.__(
              'Last shaped request: %1/%2, reasoning effort %3, max_tokens %4 (%5)',
              a.provider,
              a.model,
              a.reasoningEffort || 'none',
              a.maxTokens,
              when(a.at ?? null)
            )
          )
        : null,
      h(
        'div',
        { class: 'dsh-muted', 'data-testid': 'dsh-academic-gate' },
        gate?.count && gate.lastAt
          ? trans.__('Delivery gate %1 (last %2).', gateText(gate.count, trans), when(gate.lastAt))
          : trans.__('Delivery gate %1.', gateText(gate?.count, trans))
      ),
      st.lastError ? h('div', { class: 'dsh-error' }, trans.__('Last error: %1', st.lastError)) : null,
      state.error ? h('div', { class: 'dsh-error' }, state.error) : null
    )
  ];
}
