/**
 * The Records tab (issue 8; issue 22, item 5: one view per tab): the notebook's records as a
 * list (records.ts `recordList`), or one record's timeline behind "← Records" with the
 * "show all" box. It draws the model's `RecordsState`; it never fetches.
 */

import { h } from '../dom';
import type { Trans } from '../i18n';
import type { RecordsState } from '../model';
import { recordList, recordTimeline } from '../records';

export interface IRecordsActions {
  open(id: string | null): void;
  setShowAll(value: boolean): void;
}

/** What the view draws, as a string: it is redrawn only when this changes. */
export function recordsKey(notebook: string | null, state: RecordsState | null, showAll: boolean): string {
  return `${notebook}:${showAll}:${JSON.stringify(state)}`;
}

/**
 * The Records view's content. `sidecar` names the notebook's sidecar folder (`report.dsh/`),
 * for the sentence shown when the notebook shows record outputs but the folder has none.
 */
export function renderRecords(
  state: RecordsState | null,
  showAll: boolean,
  sidecar: string,
  actions: IRecordsActions,
  trans: Trans
): Node[] {
  if (state === null) {
    return []; // nothing read yet
  }
  if (state.view === 'list') {
    const shown = state.shownOutputs;
    return [
      recordList(
        state.list,
        id => actions.open(id),
        shown
          ? trans.__(
              'This notebook shows %1, but its sidecar folder %2 has no records (it was not copied with the notebook, or the notebook has not been run here): run the notebook to write them.',
              trans._n('%1 record output', '%1 record outputs', shown),
              sidecar
            )
          : null,
        trans
      )
    ];
  }
  const back = h(
    'button',
    { class: 'dsh-btn', 'data-testid': 'dsh-records-back', onclick: () => actions.open(null) },
    trans.__('← Records')
  );
  if (state.error !== null || !state.detail) {
    return [
      h('div', { class: 'dsh-toolbar' }, back),
      h(
        'div',
        { class: 'dsh-error' },
        trans.__('Record %1 cannot be shown: %2', state.id, state.error ?? trans.__('no answer'))
      )
    ];
  }
  const box = h('input', { type: 'checkbox', 'data-testid': 'dsh-show-all' });
  box.checked = showAll;
  box.addEventListener('change', () => actions.setShowAll(box.checked));
  return [
    h(
      'div',
      { class: 'dsh-toolbar' },
      back,
      h('label', { class: 'dsh-muted' }, box, ' ', trans.__('show all (refused rows, hidden notes)'))
    ),
    recordTimeline(state.detail, showAll, trans)
  ];
}
