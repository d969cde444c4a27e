/**
 * The right-sidebar panel (issue 8; spec: storage.md "Routes for the side panel").
 *
 * - Four tabs: Records (list, then one record's timeline with "show all"), Academic (the
 *   toggle, looking like the notebook widget: an outline when off, a dark-blue gradient when
 *   on), Reviewer (the latest review of this notebook's chat, insights expandable, a "new"
 *   badge on the tab until it is looked at), Ledger (decision states, claims, objections;
 *   Approve / Reject / Needs revision for a decision awaiting the person, behind a
 *   confirmation).
 * - It follows the notebook it is given (`setNotebook`, from the notebook tracker) and
 *   refreshes every 5 s while it is visible, when it is shown, and when the notebook is saved.
 *   It also counts the notebook's own dsh outputs (`INotebookOutputs`), so a notebook whose
 *   sidecar folder did not come with it says so instead of "No records yet".
 * - Layout for a narrow sidebar: the header and the tab bar stay put while the content below
 *   them is the only scroller; the tabs wrap onto a second row rather than overflow; nothing
 *   inside may make the panel wider than the sidebar (code wraps at underscores).
 * - A view is redrawn only when its data changed, so open details, scroll position and a note
 *   being typed survive the polling.
 * - Every element a test needs has a stable `data-testid`.
 */

import { Widget } from '@lumino/widgets';
import { Message } from '@lumino/messaging';

import {
  ApiError,
  DshApi,
  IAcademicStatus,
  IDecisionView,
  ILedgerFold,
  ILedgerSummary,
  IRecordDetail,
  IRecordSummary,
  IReview,
  IReviewQuestion,
  ISession,
  Verdict
} from './api';
import { badge, code, h, plural, setChildren, when, yes } from './dom';
import { recordList, recordTimeline } from './records';

export const POLL_MS = 5000;

export const MIME_RECORD = 'application/vnd.dsh.record+json';
export const MIME_REVIEW = 'application/vnd.dsh.review+json';

/** What the panel can ask about the notebook's own outputs (the notebook model, in index.ts). */
export interface INotebookOutputs {
  /** How many outputs of the notebook's code cells carry `mime` (and pass `keep`). */
  count(mime: string, keep?: (data: any) => boolean): number;
}

export type TabName = 'records' | 'academic' | 'reviewer' | 'ledger';

const TABS: [TabName, string][] = [
  ['records', 'Records'],
  ['academic', 'Academic'],
  ['reviewer', 'Reviewer'],
  ['ledger', 'Ledger']
];

const VERDICTS: [Verdict, string, string][] = [
  ['approved', 'Approve', 'dsh-btn-ok'],
  ['rejected', 'Reject', 'dsh-btn-danger'],
  ['needs_revision', 'Needs revision', 'dsh-btn-warn']
];

/**
 * A source's bibliographic verdict (research.md "Events", `source-verified`; issue 21 added
 * `withdrawn`) and the badge it is drawn with: only `verified` is good.
 */
export const SOURCE_VERDICTS: { [verdict: string]: { label: string; kind: string } } = {
  verified: { label: 'verified', kind: 'ok' },
  mismatch: { label: 'mismatch', kind: 'error' },
  inconclusive: { label: 'inconclusive', kind: 'warn' },
  retracted: { label: 'retracted', kind: 'error' },
  withdrawn: { label: 'withdrawn', kind: 'error' },
  expression_of_concern: { label: 'expression of concern', kind: 'warn' },
  corrected: { label: 'corrected', kind: 'warn' }
};

/** A review target's source as the notebook's reviewer widget names it (widgets/reviewer.py). */
const SOURCE_LABELS: { [source: string]: string } = {
  dsh: 'DeepSeek Harness session',
  codex: 'Codex CLI conversation',
  claude: 'Claude Code conversation',
  chat: 'jupyter-ai chat'
};

const SHOW_ALL_KEY = 'dsh-notebook:records:showAll';
const SEEN_KEY = 'dsh-notebook:reviewer:seen:';

function store(key: string, value?: string): string | null {
  try {
    if (value !== undefined) {
      window.localStorage.setItem(key, value);
      return value;
    }
    return window.localStorage.getItem(key);
  } catch {
    return null;
  }
}

function message(err: unknown): string {
  if (err instanceof ApiError && err.status === 404 && !err.route.includes('/')) {
    return `${err.message} (is the dsh-notebook server extension enabled? see \`jupyter server extension list\`)`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** `0` -> `sent back no reply yet`; `1` -> `sent back 1 long reply for a verification log`. */
export function gateText(count: number | null | undefined): string {
  const n = count ?? 0;
  return n
    ? `sent back ${plural(n, 'long reply', 'long replies')} for a verification log`
    : 'sent back no reply yet';
}

/** The academic label without CJK (which draws as boxes where no CJK font is installed). */
export const ACADEMIC_LABEL = 'Academic mode';

/**
 * The academic toggle's tooltip: the notebook widget's (widgets/academic.py) with the mode's
 * Chinese title up front (the button itself says "Academic mode") and "sent back 1 reply"
 * for its "repl(ies)".
 */
export function academicTooltip(st: IAcademicStatus): string {
  const parts = [`${ACADEMIC_LABEL} (${st.title || '学术模式'}) is ${st.enabled ? 'on' : 'off'}`];
  const a = st.applied;
  if (a) {
    parts.push(
      `last shaped request: ${a.provider}/${a.model}, reasoning effort ${a.reasoningEffort || 'none'}, max_tokens ${a.maxTokens} (${a.at})`
    );
  }
  parts.push(`delivery gate ${gateText(st.gate?.count)}`);
  if (st.lastError) {
    parts.push(`last error: ${st.lastError}`);
  }
  return parts.join(' · ');
}

function unwrapReview(x: any): IReview {
  if (x && typeof x === 'object' && x.review && typeof x.review === 'object') {
    return { ...x.review, target: x.review.target ?? x.target };
  }
  return x as IReview;
}

export class DshPanel extends Widget {
  private _notebook: string | null = null;
  private _outputs: INotebookOutputs | null = null;
  private _tab: TabName = 'records';
  private _timer: number | null = null;
  private _busy = false;
  private _again = false;
  private _seen: { [view: string]: string } = {};

  private _tabButtons = new Map<TabName, HTMLButtonElement>();
  private _views = new Map<TabName, HTMLElement>();
  private _where: HTMLElement;
  private _status: HTMLElement;
  private _body: HTMLElement;

  // records
  private _record: string | null = null;
  private _showAll = store(SHOW_ALL_KEY) === 'true';
  // reviewer
  private _reviews: IReview[] = [];
  private _sessions: ISession[] = [];
  private _reviewShown: string | null = null;
  // ledger
  private _ledger: string | null = null;
  private _notes = new Map<string, string>();
  private _pending: { decision: string; verdict: Verdict; revision: number } | null = null;
  private _ledgerMessage: HTMLElement = h('div', {
    class: 'dsh-message',
    'data-testid': 'dsh-ledger-message'
  });

  constructor(readonly api: DshApi) {
    super();
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
        h('span', { class: 'dsh-tab-label' }, label),
        h('span', { class: 'dsh-tab-badge', 'data-testid': `dsh-tab-${name}-badge` })
      );
      this._tabButtons.set(name, b);
      bar.appendChild(b);
      this._views.set(
        name,
        h('div', {
          class: 'dsh-view',
          role: 'tabpanel',
          'data-testid': `dsh-view-${name}`
        })
      );
    }
    // the header and the tabs stay put; the body below them is the only scroller
    this._body = h('div', { class: 'dsh-body', 'data-testid': 'dsh-body' }, this._status, ...this._views.values());
    this.node.append(
      h('div', { class: 'dsh-top' }, h('div', { class: 'dsh-header' }, h('b', {}, 'dsh-notebook'), this._where), bar),
      this._body
    );
    this.showTab('records', false);
    this._drawWhere();
  }

  get notebook(): string | null {
    return this._notebook;
  }

  get currentTab(): TabName {
    return this._tab;
  }

  /**
   * Follow another notebook (its path relative to the server root), or none; `outputs`
   * counts that notebook's own dsh outputs.
   */
  setNotebook(path: string | null, outputs: INotebookOutputs | null = null): void {
    const before = this._outputs;
    this._outputs = path ? outputs : null;
    if (path === this._notebook) {
      if (this._outputs !== before && path) {
        void this.refresh(); // the notebook's model is ready now: its outputs can be counted
      }
      return;
    }
    this._notebook = path;
    this._record = null;
    this._ledger = null;
    this._pending = null;
    this._reviews = [];
    this._sessions = [];
    this._reviewShown = null;
    this._seen = {};
    this._ledgerMessage.replaceChildren();
    this._drawWhere();
    void this.refresh();
  }

  showTab(name: TabName, refresh = true): void {
    this._tab = name;
    for (const [n, b] of this._tabButtons) {
      b.classList.toggle('dsh-tab-active', n === name);
      b.setAttribute('aria-selected', String(n === name));
    }
    for (const [n, v] of this._views) {
      v.style.display = n === name ? '' : 'none';
    }
    if (name === 'reviewer') {
      this._markReviewSeen();
    }
    if (refresh) {
      void this.refresh();
    }
  }

  /** Re-read what the shown tab needs (and the reviewer and ledger badges). */
  async refresh(): Promise<void> {
    if (this._busy) {
      this._again = true;
      return;
    }
    this._busy = true;
    try {
      do {
        this._again = false;
        await this._refreshOnce();
      } while (this._again);
    } finally {
      this._busy = false;
    }
  }

  private async _refreshOnce(): Promise<void> {
    const errors: string[] = [];
    const guard = async (what: () => Promise<void>) => {
      try {
        await what();
      } catch (err) {
        errors.push(message(err));
      }
    };
    const jobs: Promise<void>[] = [];
    if (this._tab === 'academic') {
      jobs.push(guard(() => this._refreshAcademic()));
    }
    if (this._notebook) {
      if (this._tab === 'records') {
        jobs.push(guard(() => this._refreshRecords()));
      }
      jobs.push(guard(() => this._refreshReviews()));
      jobs.push(guard(() => this._refreshLedgers()));
    } else if (this._tab !== 'academic') {
      this._draw(
        this._tab,
        'no-notebook',
        h('div', { class: 'dsh-empty' }, 'Open a notebook to see its records, reviews and ledgers.')
      );
    }
    await Promise.all(jobs);
    setChildren(this._status, errors.length ? h('div', { class: 'dsh-error' }, errors.join('\n')) : null);
  }

  private _drawWhere(): void {
    setChildren(this._where, this._notebook ?? 'no notebook open');
    this._where.title = this._notebook ?? '';
  }

  /** Redraw a view only when its data changed (`key`). */
  private _draw(view: TabName, key: string, ...content: (Node | null)[]): void {
    if (this._seen[view] === key) {
      return;
    }
    this._seen[view] = key;
    setChildren(this._views.get(view)!, ...content);
  }

  /** How many of the followed notebook's outputs carry `mime` (0 when it cannot tell). */
  private _countOutputs(mime: string, keep?: (data: any) => boolean): number {
    try {
      return this._outputs ? this._outputs.count(mime, keep) : 0;
    } catch {
      return 0;
    }
  }

  /** `work/report.ipynb` -> `report.dsh/` (the sidecar folder beside the notebook). */
  private _sidecar(): string {
    const name = (this._notebook ?? '').split('/').pop() ?? '';
    return `${name.replace(/\.ipynb$/i, '')}.dsh/`;
  }

  private _setBadge(tab: TabName, text: string, kind = 'new'): void {
    const el = this._tabButtons.get(tab)!.querySelector('.dsh-tab-badge') as HTMLElement;
    el.textContent = text;
    el.className = `dsh-tab-badge ${text ? 'dsh-tab-badge-' + kind : ''}`;
  }

  // ------------------------------------------------------------------------- records

  private async _refreshRecords(): Promise<void> {
    const nb = this._notebook!;
    if (this._record === null) {
      const list: IRecordSummary[] = await this.api.records(nb);
      if (nb !== this._notebook || this._record !== null) {
        return;
      }
      const shown = list.length ? 0 : this._countOutputs(MIME_RECORD);
      this._draw(
        'records',
        `list:${nb}:${shown}:${JSON.stringify(list)}`,
        recordList(
          list,
          id => {
            this._record = id;
            void this.refresh();
          },
          shown
            ? `This notebook shows ${plural(shown, 'record output')}, but its sidecar folder ${this._sidecar()} ` +
                'has no records (it was not copied with the notebook, or the notebook has not been run here): ' +
                'run the notebook to write them.'
            : null
        )
      );
      return;
    }
    const id = this._record;
    const back = h(
      'button',
      {
        class: 'dsh-btn',
        'data-testid': 'dsh-records-back',
        onclick: () => {
          this._record = null;
          void this.refresh();
        }
      },
      '← Records'
    );
    let detail: IRecordDetail;
    try {
      detail = await this.api.record(nb, id);
    } catch (err) {
      if (nb === this._notebook && id === this._record) {
        this._draw(
          'records',
          `record-error:${nb}:${id}:${message(err)}`,
          h('div', { class: 'dsh-toolbar' }, back),
          h('div', { class: 'dsh-error' }, `Record ${id} cannot be shown: ${message(err)}`)
        );
      }
      return;
    }
    if (nb !== this._notebook || id !== this._record) {
      return;
    }
    const box = h('input', {
      type: 'checkbox',
      'data-testid': 'dsh-show-all'
    }) as HTMLInputElement;
    box.checked = this._showAll;
    box.addEventListener('change', () => {
      this._showAll = box.checked;
      store(SHOW_ALL_KEY, String(this._showAll));
      this._seen.records = '';
      void this.refresh();
    });
    this._draw(
      'records',
      `record:${nb}:${this._showAll}:${JSON.stringify(detail)}`,
      h(
        'div',
        { class: 'dsh-toolbar' },
        back,
        h('label', { class: 'dsh-muted' }, box, ' show all (refused rows, hidden notes)')
      ),
      recordTimeline(detail, this._showAll)
    );
  }

  // ------------------------------------------------------------------------- academic

  private async _refreshAcademic(): Promise<void> {
    this._drawAcademic(await this.api.academic());
  }

  private _drawAcademic(st: IAcademicStatus, error = ''): void {
    const on = !!st.enabled;
    const button = h(
      'button',
      {
        class: `dsh-academic-toggle ${on ? 'dsh-academic-on' : ''}`,
        'data-testid': 'dsh-academic-toggle',
        'data-enabled': String(on),
        'aria-pressed': String(on),
        title: academicTooltip(st)
      },
      capIcon(),
      ` ${ACADEMIC_LABEL}`,
      h('span', { class: 'dsh-academic-state' }, on ? 'on' : 'off')
    );
    button.addEventListener('click', async () => {
      button.disabled = true;
      try {
        this._drawAcademic(await this.api.setAcademic(!on));
      } catch (err) {
        this._drawAcademic(st, `academic mode could not be switched: ${message(err)}`);
      }
    });
    const a = st.applied;
    this._draw(
      'academic',
      `academic:${JSON.stringify(st)}:${error}`,
      h(
        'div',
        { class: 'dsh-academic' },
        button,
        h(
          'div',
          { class: 'dsh-muted', 'data-testid': 'dsh-academic-status' },
          on
            ? 'On: model calls are shaped for academic work from the next request on (every kernel reads the same switch).'
            : 'Off: model calls go out as configured.'
        ),
        a
          ? h(
              'div',
              { class: 'dsh-muted' },
              `Last shaped request: ${a.provider}/${a.model}, reasoning effort ${a.reasoningEffort || 'none'}, max_tokens ${a.maxTokens} (${when(a.at ?? null)})`
            )
          : null,
        h(
          'div',
          { class: 'dsh-muted', 'data-testid': 'dsh-academic-gate' },
          `Delivery gate ${gateText(st.gate?.count)}` +
            (st.gate?.count && st.gate?.lastAt ? ` (last ${when(st.gate.lastAt)}).` : '.')
        ),
        st.lastError ? h('div', { class: 'dsh-error' }, `Last error: ${st.lastError}`) : null,
        error ? h('div', { class: 'dsh-error' }, error) : null
      )
    );
  }

  // ------------------------------------------------------------------------- reviewer

  private async _refreshReviews(): Promise<void> {
    const nb = this._notebook!;
    const raw = await this.api.reviews(nb);
    if (nb !== this._notebook) {
      return;
    }
    this._reviews = (Array.isArray(raw) ? raw : [])
      .map(unwrapReview)
      .filter(r => r && (r.status === undefined || r.status === 'done'));
    if (this._tab === 'reviewer' && this._reviews.some(r => this._sessionOf(r) !== null)) {
      // the session's name and first message, to name the target as people know it
      try {
        const sessions = await this.api.sessions(nb);
        if (nb !== this._notebook) {
          return;
        }
        this._sessions = Array.isArray(sessions) ? sessions : [];
      } catch {
        this._sessions = [];
      }
    }
    const latest = this._reviews[0];
    const seen = store(SEEN_KEY + nb);
    if (latest && this._tab === 'reviewer') {
      this._markReviewSeen();
    } else {
      this._setBadge('reviewer', latest && reviewKey(latest) !== seen ? 'new' : '');
    }
    this._drawReviewer();
  }

  private _markReviewSeen(): void {
    const latest = this._reviews[0];
    if (this._notebook && latest) {
      store(SEEN_KEY + this._notebook, reviewKey(latest));
    }
    this._setBadge('reviewer', '');
  }

  private _drawReviewer(): void {
    const reviews = this._reviews;
    if (!reviews.length) {
      const shown = this._countOutputs(MIME_REVIEW, d => !!d && typeof d === 'object' && !!d.verdict);
      this._draw(
        'reviewer',
        `none:${this._notebook}:${shown}`,
        shown
          ? h(
              'div',
              { class: 'dsh-notice', 'data-testid': 'dsh-reviews-empty' },
              `This notebook shows ${plural(shown, 'review output')}, but its sidecar folder ${this._sidecar()} ` +
                'has no review history (it was not copied with the notebook, or the notebook has not been run ' +
                'here): run the notebook, or %review, to review its chat here.'
            )
          : h(
              'div',
              { class: 'dsh-empty', 'data-testid': 'dsh-reviews-empty' },
              'No review of this notebook’s chat yet: %review runs one.'
            )
      );
      return;
    }
    let shown = reviews.find(r => reviewKey(r) === this._reviewShown) ?? reviews[0];
    const select = h('select', { 'data-testid': 'dsh-review-history' }) as HTMLSelectElement;
    reviews.forEach((r, i) => {
      const opt = h(
        'option',
        { value: reviewKey(r) },
        `${i === 0 ? 'latest' : `#${reviews.length - i}`} · ${r.verdict ?? ''} · ${when(r.at ?? null)}`
      ) as HTMLOptionElement;
      opt.selected = r === shown;
      select.appendChild(opt);
    });
    select.addEventListener('change', () => {
      this._reviewShown = select.value;
      this._seen.reviewer = '';
      this._drawReviewer();
    });
    shown = shown!;
    const insights = shown.insights || [];
    const target = this._targetName(shown);
    const questions = (shown.questions || []).filter(q => q && typeof q === 'object');
    this._draw(
      'reviewer',
      `${reviewKey(shown)}:${reviews.length}:${target.text}:${JSON.stringify(shown)}`,
      h(
        'div',
        { class: 'dsh-review', 'data-testid': 'dsh-review' },
        reviews.length > 1 ? h('div', { class: 'dsh-toolbar' }, select) : null,
        h(
          'div',
          { class: 'dsh-card dsh-card-header' },
          h('div', { class: 'dsh-card-title' }, h('b', {}, shown.verdict ?? 'unknown'), ' · ', shown.headline ?? ''),
          shown.summary ? h('div', {}, shown.summary) : null,
          h(
            'div',
            { class: 'dsh-muted' },
            [shown.focus ? `focus ${shown.focus}` : '', when(shown.at ?? null), shown.model ?? '']
              .filter(Boolean)
              .join(' · ')
          ),
          target.text
            ? h(
                'div',
                { class: 'dsh-muted', 'data-testid': 'dsh-review-target', title: target.title },
                `Reviewed: ${target.text}`
              )
            : null
        ),
        insights.length
          ? insights.map((ins, i) =>
              h(
                'details',
                { class: 'dsh-insight', 'data-testid': 'dsh-insight' },
                h(
                  'summary',
                  {},
                  h('b', {}, `${i + 1}. ${ins.title ?? ''}`),
                  ` · confidence ${ins.confidence ?? ''}`,
                  ins.verified === false ? h('span', { class: 'dsh-warn' }, ' · unverified evidence') : null
                ),
                h(
                  'ul',
                  {},
                  (ins.evidence || []).map(e =>
                    h(
                      'li',
                      {},
                      code(`[${e.marker ?? ''}]`),
                      ` “${e.quote ?? ''}”`,
                      e.verified === false
                        ? h('span', { class: 'dsh-warn' }, ' unverified: not found in the transcript')
                        : null
                    )
                  )
                ),
                h('div', {}, h('b', {}, 'Why: '), ins.why ?? ''),
                h('div', {}, h('b', {}, 'Next: '), ins.suggestion ?? ''),
                h('div', {}, h('b', {}, 'Check: '), ins.check ?? '')
              )
            )
          : h('div', { class: 'dsh-empty' }, 'This review has no insights.'),
        questions.length ? questionList(questions) : null
      )
    );
  }

  /**
   * The session id when `r` reviewed a chat in this notebook's sidecar folder: a `notebook`
   * target whose path ends in `<stem>.dsh/sessions/<id>.jsonl`. The route names it relative
   * to the notebook's folder; a notebook copied from elsewhere keeps the absolute path of the
   * machine that ran it, so the last three parts decide (and `_targetName` checks the id
   * against this notebook's sessions).
   */
  private _sessionOf(r: IReview): string | null {
    const t = r.target;
    if (!t || t.source !== 'notebook' || typeof t.path !== 'string') {
      return null;
    }
    const parts = t.path.split(/[\\/]/);
    const file = parts.pop() ?? '';
    if (parts.pop() !== 'sessions' || parts.pop() + '/' !== this._sidecar()) {
      return null;
    }
    return file.replace(/\.jsonl(\.zst)?$/, '');
  }

  /** The review's target as people know it, and the file it was read from (the tooltip). */
  private _targetName(r: IReview): { text: string; title: string } {
    const t = r.target;
    if (!t || typeof t !== 'object') {
      return { text: '', title: '' };
    }
    const path = typeof t.path === 'string' ? t.path : '';
    const parts = path.split(/[\\/]/);
    const file = parts[parts.length - 1];
    const own = this._sessionOf(r);
    const s = own === null ? undefined : this._sessions.find(x => x.id === own);
    const absolute = /^([\\/]|[A-Za-z]:)/.test(path);
    if (own !== null && (s || !absolute)) {
      const name = s?.name ? `session “${s.name}”` : `session ${own}`;
      const first = s?.title ? `, which starts “${s.title}”` : '';
      const started = s?.started ? ` (started ${when(s.started)})` : '';
      return { text: `this notebook’s chat, ${name}${started}${first}`, title: path };
    }
    if (t.source === 'notebook') {
      // another notebook's chat: <other>.dsh/sessions/<id>.jsonl
      const folder = parts.length >= 3 ? parts[parts.length - 3] : '';
      const other = folder.endsWith('.dsh') ? folder.slice(0, -4) + '.ipynb' : folder || 'another notebook';
      return { text: `${other}’s chat, session ${file.replace(/\.jsonl$/, '')}`, title: path };
    }
    const label = SOURCE_LABELS[String(t.source)] ?? `${t.source ?? 'unknown source'} conversation`;
    return { text: `${label} ${file}`, title: path };
  }

  // ------------------------------------------------------------------------- ledger

  private async _refreshLedgers(): Promise<void> {
    const nb = this._notebook!;
    const ledgers: ILedgerSummary[] = await this.api.ledgers(nb);
    if (nb !== this._notebook) {
      return;
    }
    const awaiting = ledgers.reduce((n, l) => n + awaitingCount(l), 0);
    this._setBadge('ledger', awaiting ? String(awaiting) : '', 'await');
    if (this._tab !== 'ledger') {
      return;
    }
    if (!ledgers.length) {
      this._draw(
        'ledger',
        `none:${nb}`,
        h(
          'div',
          { class: 'dsh-empty', 'data-testid': 'dsh-ledgers-empty' },
          'No research ledger yet: %ledger ask starts one.'
        )
      );
      return;
    }
    if (!this._ledger || !ledgers.some(l => l.name === this._ledger)) {
      this._ledger = (ledgers.find(l => l.name === 'main') ?? ledgers[0]).name;
    }
    const name = this._ledger;
    let fold: ILedgerFold;
    try {
      fold = await this.api.ledger(nb, name);
    } catch (err) {
      // a ledger that cannot be read or folded: say why, keep the others reachable
      const broken = ledgers.find(l => l.name === name);
      fold = {
        events: 0,
        decisions: [],
        claims: [],
        sources: [],
        objections: [],
        error: broken?.error || message(err)
      };
    }
    if (nb !== this._notebook || name !== this._ledger) {
      return;
    }
    this._drawLedger(ledgers, fold);
  }

  private _drawLedger(ledgers: ILedgerSummary[], fold: ILedgerFold, force = false): void {
    if (force) {
      this._seen.ledger = '';
    }
    const select = h('select', { 'data-testid': 'dsh-ledger-select' }) as HTMLSelectElement;
    for (const l of ledgers) {
      const opt = h('option', { value: l.name }, `${l.name} (${l.events === null || l.events === undefined ? 'cannot be read' : plural(l.events, 'event')})`) as HTMLOptionElement;
      opt.selected = l.name === this._ledger;
      select.appendChild(opt);
    }
    select.addEventListener('change', () => {
      this._ledger = select.value;
      this._pending = null;
      void this.refresh();
    });
    const decisions = fold.decisions || [];
    const claims = fold.claims || [];
    const objections = fold.objections || [];
    const open = objections.filter(o => o.state === 'open').length;
    this._draw(
      'ledger',
      `${this._ledger}:${JSON.stringify(this._pending)}:${JSON.stringify(fold)}`,
      h(
        'div',
        { class: 'dsh-ledger', 'data-testid': 'dsh-ledger' },
        h(
          'div',
          { class: 'dsh-toolbar' },
          ledgers.length > 1 ? select : h('b', {}, `ledger ${this._ledger}`),
          h(
            'span',
            { class: 'dsh-muted' },
            ` ${plural(fold.events ?? 0, 'event')} · ${plural(decisions.length, 'decision')} · ${plural(claims.length, 'claim')} · ${plural((fold.sources || []).length, 'source')} · ${plural(open, 'open objection')}`
          )
        ),
        this._ledgerMessage,
        fold.error ? h('div', { class: 'dsh-error' }, `Ledger ${this._ledger} cannot be read: ${fold.error}`) : null,
        fold.intact === false && !fold.error
          ? h('div', { class: 'dsh-error' }, `Ledger ${this._ledger}: its hash chain is broken (dsh-notebook verify says where).`)
          : null,
        h('h4', {}, 'Decisions'),
        decisions.length
          ? decisions.map(d => this._decisionCard(d, ledgers, fold))
          : h('div', { class: 'dsh-empty' }, 'No decisions yet.'),
        h(
          'details',
          { open: true, 'data-testid': 'dsh-claims' },
          h('summary', {}, `Claims (${claims.length})`),
          claims.length
            ? h(
                'ul',
                { class: 'dsh-kv' },
                claims.map(c =>
                  h(
                    'li',
                    { 'data-testid': 'dsh-claim' },
                    code(c.claim_id),
                    ' ',
                    c.text,
                    c.quote ? h('div', { class: 'dsh-quote' }, `“${c.quote}” (${c.source_id})`) : null,
                    h(
                      'div',
                      { class: 'dsh-muted' },
                      'verdicts: ',
                      (c.verdicts || []).map(v => v.verdict).join(', ') || 'none',
                      ' · eligible: ',
                      yes(c.eligible),
                      ` — ${c.reason}`
                    )
                  )
                )
              )
            : h('div', { class: 'dsh-empty' }, 'No claims yet.')
        ),
        h(
          'details',
          { open: true, 'data-testid': 'dsh-sources' },
          h('summary', {}, `Sources (${(fold.sources || []).length})`),
          (fold.sources || []).length
            ? h(
                'ul',
                { class: 'dsh-kv' },
                (fold.sources || []).map(s => {
                  const v = s.verdict ? SOURCE_VERDICTS[s.verdict] : undefined;
                  return h(
                    'li',
                    { 'data-testid': 'dsh-source', 'data-verdict': s.verdict ?? 'unverified' },
                    code(s.source_id),
                    ' ',
                    s.title || s.identifier || '',
                    ' ',
                    badge(v ? v.label : s.verdict ?? 'unverified', v ? v.kind : 'muted'),
                    (s.notices || []).length
                      ? h('div', { class: 'dsh-muted' }, `notices: ${(s.notices || []).join(', ')}`)
                      : null,
                    h('div', { class: 'dsh-muted' }, s.fulltext ? 'fulltext linked' : 'fulltext not linked')
                  );
                })
              )
            : h('div', { class: 'dsh-empty' }, 'No sources yet.')
        ),
        h(
          'details',
          { open: true, 'data-testid': 'dsh-objections' },
          h('summary', {}, `Objections (${open} open, ${objections.length - open} resolved)`),
          objections.length
            ? h(
                'ul',
                { class: 'dsh-kv' },
                objections.map(o =>
                  h(
                    'li',
                    { 'data-testid': 'dsh-objection' },
                    code(o.objection_id),
                    ` on ${o.target?.kind ?? ''} ${o.target?.id ?? ''}: ${o.reason}`,
                    o.severity ? ` (${o.severity})` : '',
                    ' ',
                    badge(o.state, o.state === 'open' ? 'error' : 'ok'),
                    o.adjudication
                      ? h('div', { class: 'dsh-muted' }, `adjudication: ${o.adjudication.verdict}: ${o.adjudication.rationale}`)
                      : null
                  )
                )
              )
            : h('div', { class: 'dsh-empty' }, 'No objections.')
        )
      )
    );
  }

  private _decisionCard(d: IDecisionView, ledgers: ILedgerSummary[], fold: ILedgerFold): HTMLElement {
    const p = d.predicates;
    // once approval is requested (or decided) for this revision, "cannot request" is expected
    const asked = d.awaiting_person || d.human_decisions.some(hd => hd.revision === d.revision);
    const can = p.can_request_human_approval.value;
    const items = [
      h('li', {}, code('can_request_human_approval'), ': ', yes(can, true, asked && !can), ` — ${p.can_request_human_approval.reason}`),
      h('li', {}, code('has_unresolved_objections'), ': ', yes(p.has_unresolved_objections.value, false), ` — ${p.has_unresolved_objections.reason}`),
      ...d.claims.map(c =>
        h('li', {}, 'claim ', code(c.claim_id), ' eligible: ', yes(c.eligible), ` — ${c.reason}`)
      ),
      ...d.human_decisions.map(hd =>
        h(
          'li',
          {},
          `human decision, revision ${hd.revision}: `,
          h('b', {}, hd.verdict),
          ` by ${hd.by ?? ''} (${hd.channel ?? ''})${hd.note ? ' — ' + hd.note : ''}`
        )
      )
    ];
    const card = h(
      'div',
      {
        class: `dsh-card dsh-decision ${d.awaiting_person ? 'dsh-decision-awaiting' : ''}`,
        'data-testid': 'dsh-decision',
        'data-decision-id': d.decision_id,
        'data-status': d.status
      },
      h(
        'div',
        { class: 'dsh-card-title' },
        h('b', {}, d.decision_id),
        ` · revision ${d.revision} · `,
        badge(d.status, d.awaiting_person ? 'warn' : d.status === 'approved' ? 'ok' : '')
      ),
      h('div', {}, d.statement),
      d.confidence !== null && d.confidence !== undefined
        ? h('div', { class: 'dsh-muted' }, `confidence ${d.confidence}${d.limitations ? '; limitations: ' + d.limitations : ''}`)
        : null,
      h('ul', { class: 'dsh-kv' }, items)
    );
    if (!d.awaiting_person) {
      return card;
    }
    card.appendChild(h('div', { class: 'dsh-awaiting' }, h('b', {}, 'Awaiting your decision'), ' for this revision.'));
    const note = h('input', {
      type: 'text',
      class: 'dsh-note',
      placeholder: 'note (optional)',
      'data-testid': 'dsh-decision-note'
    }) as HTMLInputElement;
    note.value = this._notes.get(d.decision_id) ?? '';
    note.addEventListener('input', () => this._notes.set(d.decision_id, note.value));
    const row = h('div', { class: 'dsh-toolbar' }, note);
    for (const [verdict, label, cls] of VERDICTS) {
      row.appendChild(
        h(
          'button',
          {
            class: `dsh-btn ${cls}`,
            'data-testid': `dsh-decide-${verdict}`,
            title: `${label} decision ${d.decision_id}`,
            onclick: () => {
              this._pending = { decision: d.decision_id, verdict, revision: d.revision };
              this._ledgerMessage.replaceChildren();
              this._drawLedger(ledgers, fold, true);
            }
          },
          label
        )
      );
    }
    card.appendChild(row);
    const pend = this._pending;
    if (pend && pend.decision === d.decision_id) {
      const text = this._notes.get(d.decision_id)?.trim() ?? '';
      card.appendChild(
        h(
          'div',
          { class: 'dsh-confirm', 'data-testid': 'dsh-confirm' },
          h(
            'div',
            {},
            'Record ',
            h('b', {}, pend.verdict),
            ` for decision ${pend.decision} revision ${pend.revision}` +
              (text ? ` with the note “${text}”` : '') +
              '? This is written to the ledger and cannot be undone.'
          ),
          h(
            'div',
            { class: 'dsh-toolbar' },
            h(
              'button',
              {
                class: 'dsh-btn dsh-btn-primary',
                'data-testid': 'dsh-confirm-yes',
                onclick: () => void this._confirm(ledgers, fold)
              },
              'Confirm'
            ),
            h(
              'button',
              {
                class: 'dsh-btn',
                'data-testid': 'dsh-confirm-no',
                onclick: () => {
                  this._pending = null;
                  setChildren(this._ledgerMessage, h('span', { class: 'dsh-muted' }, 'Cancelled; nothing was recorded.'));
                  this._drawLedger(ledgers, fold, true);
                }
              },
              'Cancel'
            )
          )
        )
      );
    }
    return card;
  }

  private async _confirm(ledgers: ILedgerSummary[], fold: ILedgerFold): Promise<void> {
    const pend = this._pending;
    const nb = this._notebook;
    const name = this._ledger;
    if (!pend || !nb || !name) {
      return;
    }
    this._pending = null;
    this._drawLedger(ledgers, fold, true);
    const note = this._notes.get(pend.decision)?.trim() ?? '';
    try {
      const receipt = await this.api.decide(nb, name, pend.decision, pend.revision, pend.verdict, note);
      if (receipt && receipt.ok === false) {
        setChildren(
          this._ledgerMessage,
          h('span', { class: 'dsh-error' }, `Refused: ${receipt.code ?? ''}: ${receipt.error ?? ''}`)
        );
      } else {
        this._notes.delete(pend.decision);
        setChildren(
          this._ledgerMessage,
          h(
            'span',
            { class: 'dsh-yes' },
            `Recorded: decision ${pend.decision} ${pend.verdict}` + (receipt && receipt.seq ? ` (seq ${receipt.seq}).` : '.')
          )
        );
      }
    } catch (err) {
      setChildren(this._ledgerMessage, h('span', { class: 'dsh-error' }, `Refused: ${message(err)}`));
    }
    this._seen.ledger = '';
    await this.refresh();
  }

  // ------------------------------------------------------------------------- lifecycle

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this.refresh();
    this._startPolling();
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this._stopPolling();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    if (this.isVisible) {
      this._startPolling();
    }
  }

  protected onBeforeDetach(msg: Message): void {
    this._stopPolling();
    super.onBeforeDetach(msg);
  }

  dispose(): void {
    this._stopPolling();
    super.dispose();
  }

  private _startPolling(): void {
    if (this._timer === null) {
      this._timer = window.setInterval(() => {
        if (this.isVisible) {
          void this.refresh();
        }
      }, POLL_MS);
    }
  }

  private _stopPolling(): void {
    if (this._timer !== null) {
      window.clearInterval(this._timer);
      this._timer = null;
    }
  }
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

/** The follow-up questions asked about one review, with their answers, behind one expander. */
function questionList(questions: IReviewQuestion[]): HTMLElement {
  return h(
    'details',
    { class: 'dsh-questions', 'data-testid': 'dsh-review-questions' },
    h('summary', {}, h('b', {}, `Follow-up questions (${questions.length})`)),
    questions.map(q =>
      h(
        'div',
        { class: 'dsh-question', 'data-testid': 'dsh-review-question' },
        h(
          'div',
          {},
          h('b', {}, 'Q: '),
          q.question ?? '',
          q.ts ? h('span', { class: 'dsh-muted' }, ` · ${when(q.ts)}`) : null
        ),
        q.answer
          ? h('div', { class: 'dsh-answer' }, h('b', {}, 'A: '), q.answer)
          : q.error
            ? h('div', { class: 'dsh-error' }, `Not answered: ${q.error}`)
            : h('div', { class: 'dsh-empty' }, 'No answer was recorded for this question.')
      )
    )
  );
}

function reviewKey(r: IReview): string {
  return String(r.id ?? `${r.at ?? ''}:${r.headline ?? ''}`);
}

function awaitingCount(l: ILedgerSummary): number {
  const a = l.awaiting;
  if (Array.isArray(a)) {
    return a.length;
  }
  if (typeof a === 'number') {
    return a;
  }
  return 0;
}
