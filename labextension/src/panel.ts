/**
 * The right-sidebar panel (issue 8; issue 22, item 5; spec: storage.md "Routes for the side
 * panel"): the frame around the model (model.ts) and its four views (views/).
 *
 * - Four tabs: Records, Academic, Reviewer (a "new" badge until the latest review is looked
 *   at), Ledger (a badge counting decisions awaiting the person). Each view draws one part of
 *   the model and is redrawn only when that part changed (`*Key`), so open details, scroll
 *   position and a note being typed survive the polling.
 * - It follows the notebook it is given (`setNotebook`, from the notebook tracker); the model
 *   polls while the panel is shown (`onAfterShow` / `onAfterHide`).
 * - Layout for a narrow sidebar: the header and the tab bar stay put while the content below
 *   them is the only scroller; the tabs wrap onto a second row rather than overflow.
 * - Its root element has the class `dsh-panel`, under which every panel style rule is scoped
 *   (style/base.css), so none reaches a notebook's widgets.
 * - Every element a test needs has a stable `data-testid`.
 */

import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import type { DshApi } from './api';
import { h, setChildren } from './dom';
import { english, Trans } from './i18n';
import { DshModel, INotebookOutputs, IPreferences, Part, TabName } from './model';
import { academicKey, renderAcademic } from './views/academic';
import { ledgerKey, renderLedger } from './views/ledger';
import { recordsKey, renderRecords } from './views/records';
import { renderReviewer, reviewerKey } from './views/reviewer';

export { MIME_RECORD, MIME_REVIEW, POLL_MS } from './model';
export type { INotebookOutputs, TabName } from './model';

const TABS: [TabName, string][] = [
  ['records', 'Records'],
  ['academic', 'Academic'],
  ['reviewer', 'Reviewer'],
  ['ledger', 'Ledger']
];

export class DshPanel extends Widget {
  readonly model: DshModel;

  private _seen: { [view: string]: string } = {};
  private _tabButtons = new Map<TabName, HTMLButtonElement>();
  private _views = new Map<TabName, HTMLElement>();
  private _where: HTMLElement;
  private _status: HTMLElement;
  private _body: HTMLElement;

  constructor(
    api: DshApi,
    prefs?: IPreferences,
    private readonly _trans: Trans = english
  ) {
    super();
    this.model = new DshModel(api, prefs);
    const trans = this._trans;
    this.id = 'dsh-panel';
    this.addClass('dsh-panel');
    this.node.dataset.testid = 'dsh-panel';
    this.title.caption = 'dsh-notebook';
    this._where = h('div', { class: 'dsh-where', 'data-testid': 'dsh-notebook-path' });
    this._status = h('div', { class: 'dsh-status', 'data-testid': 'dsh-status' });
    const bar = h('div', { class: 'dsh-tabs', role: 'tablist' });
    for (const [name, label] of TABS) {
      const b = h(
        'button',
        {
          class: 'dsh-tab',
          role: 'tab',
          id: `dsh-tab-${name}`,
          'data-testid': `dsh-tab-${name}`,
          onclick: () => this.showTab(name)
        },
        h('span', { class: 'dsh-tab-label' }, trans.__(label)),
        h('span', { class: 'dsh-tab-badge', 'data-testid': `dsh-tab-${name}-badge` })
      );
      this._tabButtons.set(name, b);
      bar.appendChild(b);
      this._views.set(name, h('div', { class: 'dsh-view', role: 'tabpanel', 'data-testid': `dsh-view-${name}` }));
    }
    // the header and the tabs stay put; the body below them is the only scroller
    this._body = h('div', { class: 'dsh-body', 'data-testid': 'dsh-body' }, this._status, ...this._views.values());
    this.node.append(
      h('div', { class: 'dsh-top' }, h('div', { class: 'dsh-header' }, h('b', {}, 'dsh-notebook'), this._where), bar),
      this._body
    );
    this.model.changed.connect((_m, part) => this._update(part), this);
    for (const part of ['notebook', 'tab', 'status', 'badges'] as Part[]) {
      this._update(part);
    }
  }

  get notebook(): string | null {
    return this.model.notebook;
  }

  get currentTab(): TabName {
    return this.model.tab;
  }

  /** Follow another notebook (its path relative to the server root), or none. */
  setNotebook(path: string | null, outputs: INotebookOutputs | null = null): void {
    this.model.setNotebook(path, outputs);
  }

  showTab(name: TabName): void {
    this.model.setTab(name);
  }

  /** Re-read what the shown tab needs now. */
  refresh(): void {
    this.model.refresh();
  }

  private _update(part: Part): void {
    const m = this.model;
    const trans = this._trans;
    switch (part) {
      case 'notebook':
        setChildren(this._where, m.notebook ?? trans.__('no notebook open'));
        this._where.title = m.notebook ?? '';
        for (const view of ['records', 'reviewer', 'ledger'] as TabName[]) {
          this._update(view);
        }
        break;
      case 'tab':
        for (const [n, b] of this._tabButtons) {
          b.classList.toggle('dsh-tab-active', n === m.tab);
          b.setAttribute('aria-selected', String(n === m.tab));
        }
        for (const [n, v] of this._views) {
          v.style.display = n === m.tab ? '' : 'none';
        }
        break;
      case 'status':
        setChildren(this._status, m.errors.length ? h('div', { class: 'dsh-error' }, m.errors.join('\n')) : null);
        break;
      case 'badges': {
        const { reviewerNew, awaiting } = m.badges;
        this._setBadge('reviewer', reviewerNew ? trans.__('new') : '', 'new');
        this._setBadge('ledger', awaiting ? String(awaiting) : '', 'await');
        break;
      }
      case 'academic':
        this._draw('academic', academicKey(m.academic), () =>
          renderAcademic(m.academic, () => void m.toggleAcademic(), trans)
        );
        break;
      case 'records':
      case 'reviewer':
      case 'ledger':
        if (!m.notebook) {
          this._draw(part, 'no-notebook', () => [
            h('div', { class: 'dsh-empty' }, trans.__('Open a notebook to see its records, reviews and ledgers.'))
          ]);
        } else if (part === 'records') {
          this._draw('records', recordsKey(m.notebook, m.records, m.showAll), () =>
            renderRecords(
              m.records,
              m.showAll,
              m.sidecar(),
              { open: id => m.openRecord(id), setShowAll: v => m.setShowAll(v) },
              trans
            )
          );
        } else if (part === 'reviewer') {
          this._draw('reviewer', reviewerKey(m.notebook, m.reviewer), () =>
            renderReviewer(m.reviewer, m.sidecar(), key => m.showReview(key), trans)
          );
        } else {
          this._draw('ledger', ledgerKey(m.notebook, m.ledger, m.ledgersRead), () =>
            renderLedger(
              m.ledger,
              m.ledgersRead,
              m.notes,
              {
                select: name => m.selectLedger(name),
                ask: pending => m.askDecision(pending),
                cancel: () => m.cancelDecision(),
                confirm: () => void m.confirmDecision()
              },
              trans
            )
          );
        }
        break;
    }
  }

  /** Redraw a view only when its data changed (`key`). */
  private _draw(view: TabName, key: string, content: () => Node[]): void {
    if (this._seen[view] === key) {
      return;
    }
    this._seen[view] = key;
    setChildren(this._views.get(view)!, ...content());
  }

  private _setBadge(tab: TabName, text: string, kind: string): void {
    const el = this._tabButtons.get(tab)!.querySelector('.dsh-tab-badge') as HTMLElement;
    el.textContent = text;
    el.className = `dsh-tab-badge ${text ? 'dsh-tab-badge-' + kind : ''}`;
  }

  // ------------------------------------------------------------------------- lifecycle

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this.model.visible = true;
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this.model.visible = false;
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this.model.visible = this.isVisible;
  }

  protected onBeforeDetach(msg: Message): void {
    this.model.visible = false;
    super.onBeforeDetach(msg);
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.model.dispose();
    super.dispose();
  }
}
