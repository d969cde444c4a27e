/**
 * The side panel's model (issue 22, item 5; spec: storage.md "Routes for the side panel").
 *
 * - It holds what the four views draw (records, academic, reviewer, ledger) and what the person
 *   chose (the notebook followed, the tab, the record or ledger open, a decision awaiting
 *   confirmation); it fetches through `DshApi` (api.ts) and says what changed through the
 *   `changed` signal, naming the part (`'records'`, `'ledger'`, ...). The views never fetch.
 * - A Lumino `Poll` re-reads what the shown tab needs (and the reviewer and ledger badges)
 *   every `POLL_MS`; a failed round backs off (up to `POLL_MAX_MS`) and shows its errors in the
 *   status line; the poll stands by while the panel is hidden (`visible = false`) or the page
 *   is hidden. `refresh()` asks for a round now.
 * - The person's preferences ("show all" in a record, the latest review seen per notebook) are
 *   read and written through `IPreferences` (the settings registry in index.ts).
 */

import { Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import type {
  DshApi,
  IAcademicStatus,
  ILedgerFold,
  ILedgerSummary,
  IRecordDetail,
  IRecordSummary,
  IReview,
  ISession,
  Verdict
} from './api';

/** The poll's interval while rounds succeed, and its longest interval after failures. */
export const POLL_MS = 5000;
export const POLL_MAX_MS = 60000;

export const MIME_RECORD = 'application/vnd.dsh.record+json';
export const MIME_REVIEW = 'application/vnd.dsh.review+json';

export type TabName = 'records' | 'academic' | 'reviewer' | 'ledger';

/** What changed: a view's data, the notebook followed, the tab, the status line or a badge. */
export type Part = TabName | 'notebook' | 'tab' | 'status' | 'badges';

/** What the panel can ask about the notebook's own outputs (the notebook model, in index.ts). */
export interface INotebookOutputs {
  /** How many outputs of the notebook's code cells carry `mime` (and pass `keep`). */
  count(mime: string, keep?: (data: any) => boolean): number;
}

/** The person's preferences, kept in JupyterLab's settings (schema/panel.json). */
export interface IPreferences {
  /** Whether a record's timeline shows refused rows and hidden notes. */
  readonly showAll: boolean;
  setShowAll(value: boolean): void;
  /** The key of the latest review the person has seen for `notebook`, or null. */
  seenReview(notebook: string): string | null;
  setSeenReview(notebook: string, key: string): void;
}

/** Preferences kept in memory (no settings registry, and the tests). */
export class MemoryPreferences implements IPreferences {
  showAll = false;
  private _seen: { [notebook: string]: string } = {};

  setShowAll(value: boolean): void {
    this.showAll = value;
  }

  seenReview(notebook: string): string | null {
    return this._seen[notebook] ?? null;
  }

  setSeenReview(notebook: string, key: string): void {
    this._seen[notebook] = key;
  }
}

/** The Records tab: the list, or one record (its detail, or why it cannot be shown). */
export type RecordsState =
  | { view: 'list'; list: IRecordSummary[]; shownOutputs: number }
  | { view: 'record'; id: string; detail: IRecordDetail | null; error: string | null };

export interface IAcademicState {
  status: IAcademicStatus | null;
  /** why the last switch failed ('' when it did not) */
  error: string;
  busy: boolean;
}

export interface IReviewerState {
  reviews: IReview[];
  sessions: ISession[];
  /** the review chosen in the history (its key), null for the latest */
  shown: string | null;
  /** how many review outputs the notebook itself shows (when its sidecar has none) */
  shownOutputs: number;
}

export interface IPending {
  decision: string;
  verdict: Verdict;
  revision: number;
}

export interface ILedgerMessage {
  kind: 'muted' | 'error' | 'yes';
  text: string;
}

export interface ILedgerState {
  ledgers: ILedgerSummary[];
  name: string | null;
  fold: ILedgerFold | null;
  pending: IPending | null;
  message: ILedgerMessage | null;
}

/** `0` when the route does not say; a list of decision ids or a count otherwise. */
export function awaitingCount(l: ILedgerSummary): number {
  const a = l.awaiting;
  if (Array.isArray(a)) {
    return a.length;
  }
  return typeof a === 'number' ? a : 0;
}

export function reviewKey(r: IReview): string {
  return String(r.id ?? `${r.at ?? ''}:${r.headline ?? ''}`);
}

function unwrapReview(x: any): IReview {
  if (x && typeof x === 'object' && x.review && typeof x.review === 'object') {
    return { ...x.review, target: x.review.target ?? x.target };
  }
  return x as IReview;
}

/** An error as a sentence; a 404 of a top-level route says to enable the server extension. */
export function errorText(err: unknown): string {
  const e = err as { status?: unknown; route?: unknown; message?: unknown } | null;
  const text = err instanceof Error ? err.message : String(err);
  if (e && e.status === 404 && typeof e.route === 'string' && !e.route.includes('/')) {
    return `${text} (is the dsh-notebook server extension enabled? see \`jupyter server extension list\`)`;
  }
  return text;
}

export class DshModel {
  readonly notes = new Map<string, string>();

  private _changed = new Signal<this, Part>(this);
  private _poll: Poll;
  private _visible = false;
  private _busy = false;
  private _again = false;
  private _disposed = false;

  private _notebook: string | null = null;
  private _outputs: INotebookOutputs | null = null;
  private _tab: TabName = 'records';
  private _errors: string[] = [];
  private _record: string | null = null;
  private _records: RecordsState | null = null;
  private _academic: IAcademicState = { status: null, error: '', busy: false };
  private _reviewer: IReviewerState = { reviews: [], sessions: [], shown: null, shownOutputs: 0 };
  private _reviewNew = false;
  private _awaiting = 0;
  private _ledger: ILedgerState = { ledgers: [], name: null, fold: null, pending: null, message: null };
  private _ledgersRead = false;

  constructor(
    readonly api: DshApi,
    readonly prefs: IPreferences = new MemoryPreferences()
  ) {
    this._poll = new Poll({
      auto: false,
      factory: () => this._round(),
      frequency: { interval: POLL_MS, backoff: true, max: POLL_MAX_MS },
      name: 'dsh-notebook:panel',
      standby: () => (this._visible ? 'when-hidden' : true)
    });
  }

  /** Emitted with the part that changed. */
  get changed(): ISignal<this, Part> {
    return this._changed;
  }

  get poll(): Poll {
    return this._poll;
  }

  get notebook(): string | null {
    return this._notebook;
  }

  get tab(): TabName {
    return this._tab;
  }

  get errors(): readonly string[] {
    return this._errors;
  }

  get records(): RecordsState | null {
    return this._records;
  }

  get showAll(): boolean {
    return this.prefs.showAll;
  }

  get academic(): IAcademicState {
    return this._academic;
  }

  get reviewer(): IReviewerState {
    return this._reviewer;
  }

  get ledger(): ILedgerState {
    return this._ledger;
  }

  /** Whether the ledgers were read for the notebook followed (false until the first answer). */
  get ledgersRead(): boolean {
    return this._ledgersRead;
  }

  /** The reviewer tab's badge ("new") and the ledger's (decisions awaiting the person). */
  get badges(): { reviewerNew: boolean; awaiting: number } {
    return { reviewerNew: this._reviewNew, awaiting: this._awaiting };
  }

  /** Whether the panel is shown: the poll stands by while it is not. */
  get visible(): boolean {
    return this._visible;
  }

  set visible(value: boolean) {
    if (value === this._visible) {
      return;
    }
    this._visible = value;
    if (value) {
      if (this._poll.isDisposed) {
        return;
      }
      void this._poll.start();
      void this._poll.refresh();
    }
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._poll.dispose();
    Signal.clearData(this);
  }

  /** `work/report.ipynb` -> `report.dsh/` (the sidecar folder beside the notebook). */
  sidecar(): string {
    const name = (this._notebook ?? '').split('/').pop() ?? '';
    return `${name.replace(/\.ipynb$/i, '')}.dsh/`;
  }

  /**
   * Follow another notebook (its path relative to the server root), or none; `outputs` counts
   * that notebook's own dsh outputs.
   */
  setNotebook(path: string | null, outputs: INotebookOutputs | null = null): void {
    const before = this._outputs;
    this._outputs = path ? outputs : null;
    if (path === this._notebook) {
      if (this._outputs !== before && path) {
        this.refresh(); // the notebook's model is ready now: its outputs can be counted
      }
      return;
    }
    this._notebook = path;
    this._record = null;
    this._records = null;
    this._reviewer = { reviews: [], sessions: [], shown: null, shownOutputs: 0 };
    this._ledger = { ledgers: [], name: null, fold: null, pending: null, message: null };
    this._ledgersRead = false;
    this._reviewNew = false;
    this._awaiting = 0;
    for (const part of ['notebook', 'records', 'reviewer', 'ledger', 'badges'] as Part[]) {
      this._emit(part);
    }
    this.refresh();
  }

  setTab(name: TabName): void {
    this._tab = name;
    if (name === 'reviewer') {
      this._markReviewSeen();
    }
    this._emit('tab');
    this.refresh();
  }

  /** Ask for a round now (when the panel is shown; otherwise when it is shown again). */
  refresh(): void {
    if (!this._poll.isDisposed) {
      void this._poll.refresh();
    }
  }

  // ----------------------------------------------------------------------- actions

  openRecord(id: string | null): void {
    this._record = id;
    this._records = null;
    this._emit('records');
    this.refresh();
  }

  setShowAll(value: boolean): void {
    this.prefs.setShowAll(value);
    this._emit('records');
  }

  async toggleAcademic(): Promise<void> {
    const st = this._academic.status;
    if (!st || this._academic.busy) {
      return;
    }
    this._academic = { ...this._academic, busy: true };
    this._emit('academic');
    try {
      this._academic = { status: await this.api.setAcademic(!st.enabled), error: '', busy: false };
    } catch (err) {
      this._academic = { status: st, error: `academic mode could not be switched: ${errorText(err)}`, busy: false };
    }
    this._emit('academic');
  }

  showReview(key: string): void {
    this._reviewer = { ...this._reviewer, shown: key };
    this._emit('reviewer');
  }

  selectLedger(name: string): void {
    this._ledger = { ...this._ledger, name, pending: null };
    this._emit('ledger');
    this.refresh();
  }

  /** The person chose a verdict: ask for confirmation (nothing is written yet). */
  askDecision(pending: IPending): void {
    this._ledger = { ...this._ledger, pending, message: null };
    this._emit('ledger');
  }

  cancelDecision(): void {
    this._ledger = {
      ...this._ledger,
      pending: null,
      message: { kind: 'muted', text: 'Cancelled; nothing was recorded.' }
    };
    this._emit('ledger');
  }

  /** Write the confirmed decision to the ledger; the message says what the server did. */
  async confirmDecision(): Promise<void> {
    const pend = this._ledger.pending;
    const nb = this._notebook;
    const name = this._ledger.name;
    if (!pend || !nb || !name) {
      return;
    }
    this._ledger = { ...this._ledger, pending: null };
    this._emit('ledger');
    const note = this.notes.get(pend.decision)?.trim() ?? '';
    let message: ILedgerMessage;
    try {
      const receipt = await this.api.decide(nb, name, pend.decision, pend.revision, pend.verdict, note);
      if (receipt && receipt.ok === false) {
        message = { kind: 'error', text: `Refused: ${receipt.code ?? ''}: ${receipt.error ?? ''}` };
      } else {
        this.notes.delete(pend.decision);
        message = {
          kind: 'yes',
          text:
            `Recorded: decision ${pend.decision} ${pend.verdict}` +
            (receipt && receipt.seq ? ` (seq ${receipt.seq}).` : '.')
        };
      }
    } catch (err) {
      message = { kind: 'error', text: `Refused: ${errorText(err)}` };
    }
    if (nb === this._notebook) {
      this._ledger = { ...this._ledger, message };
      this._emit('ledger');
    }
    await this.update();
  }

  // ----------------------------------------------------------------------- fetching

  /**
   * One round now, whatever the poll does; resolves to the errors it met (also shown in the
   * status line). Rounds never overlap: a round asked for during another runs after it.
   */
  async update(): Promise<string[]> {
    if (this._busy) {
      this._again = true;
      return this._errors.slice();
    }
    this._busy = true;
    try {
      do {
        this._again = false;
        await this._once();
      } while (this._again);
    } finally {
      this._busy = false;
    }
    return this._errors.slice();
  }

  /** The poll's round: rejects when a request failed, so the poll backs off. */
  private async _round(): Promise<void> {
    const errors = await this.update();
    if (errors.length) {
      throw new Error(errors.join('\n'));
    }
  }

  private async _once(): Promise<void> {
    const errors: string[] = [];
    const guard = async (what: () => Promise<void>) => {
      try {
        await what();
      } catch (err) {
        errors.push(errorText(err));
      }
    };
    const jobs: Promise<void>[] = [];
    if (this._tab === 'academic') {
      jobs.push(guard(() => this._readAcademic()));
    }
    if (this._notebook) {
      if (this._tab === 'records') {
        jobs.push(guard(() => this._readRecords()));
      }
      jobs.push(guard(() => this._readReviews()));
      jobs.push(guard(() => this._readLedgers()));
    }
    await Promise.all(jobs);
    if (errors.join('\n') !== this._errors.join('\n')) {
      this._errors = errors;
      this._emit('status');
    }
  }

  private _emit(part: Part): void {
    if (!this._disposed) {
      this._changed.emit(part);
    }
  }

  /** How many of the followed notebook's outputs carry `mime` (0 when it cannot tell). */
  private _countOutputs(mime: string, keep?: (data: any) => boolean): number {
    try {
      return this._outputs ? this._outputs.count(mime, keep) : 0;
    } catch {
      return 0;
    }
  }

  private async _readAcademic(): Promise<void> {
    const status = await this.api.academic();
    if (!this._academic.busy) {
      this._academic = { status, error: '', busy: false };
      this._emit('academic');
    }
  }

  private async _readRecords(): Promise<void> {
    const nb = this._notebook!;
    const id = this._record;
    if (id === null) {
      const list: IRecordSummary[] = await this.api.records(nb);
      if (nb !== this._notebook || this._record !== null) {
        return;
      }
      const shownOutputs = list.length ? 0 : this._countOutputs(MIME_RECORD);
      this._records = { view: 'list', list, shownOutputs };
      this._emit('records');
      return;
    }
    let state: RecordsState;
    try {
      state = { view: 'record', id, detail: await this.api.record(nb, id), error: null };
    } catch (err) {
      state = { view: 'record', id, detail: null, error: errorText(err) };
    }
    if (nb === this._notebook && id === this._record) {
      this._records = state;
      this._emit('records');
    }
  }

  private _sessionsWanted(reviews: IReview[]): boolean {
    return reviews.some(r => r.target && r.target.source === 'notebook');
  }

  private async _readReviews(): Promise<void> {
    const nb = this._notebook!;
    const raw = await this.api.reviews(nb);
    if (nb !== this._notebook) {
      return;
    }
    const reviews = (Array.isArray(raw) ? raw : [])
      .map(unwrapReview)
      .filter(r => r && (r.status === undefined || r.status === 'done'));
    let sessions = this._reviewer.sessions;
    if (this._tab === 'reviewer' && this._sessionsWanted(reviews)) {
      // the session's name and first message, to name the target as people know it
      try {
        const got = await this.api.sessions(nb);
        if (nb !== this._notebook) {
          return;
        }
        sessions = Array.isArray(got) ? got : [];
      } catch {
        sessions = [];
      }
    }
    const shownOutputs = reviews.length
      ? 0
      : this._countOutputs(MIME_REVIEW, d => !!d && typeof d === 'object' && !!d.verdict);
    this._reviewer = { ...this._reviewer, reviews, sessions, shownOutputs };
    const latest = reviews[0];
    if (latest && this._tab === 'reviewer') {
      this._markReviewSeen();
    } else {
      this._setReviewNew(!!latest && reviewKey(latest) !== this.prefs.seenReview(nb));
    }
    this._emit('reviewer');
  }

  private _markReviewSeen(): void {
    const latest = this._reviewer.reviews[0];
    if (this._notebook && latest && this.prefs.seenReview(this._notebook) !== reviewKey(latest)) {
      this.prefs.setSeenReview(this._notebook, reviewKey(latest));
    }
    this._setReviewNew(false);
  }

  private _setReviewNew(value: boolean): void {
    if (value !== this._reviewNew) {
      this._reviewNew = value;
      this._emit('badges');
    }
  }

  private async _readLedgers(): Promise<void> {
    const nb = this._notebook!;
    const ledgers: ILedgerSummary[] = await this.api.ledgers(nb);
    if (nb !== this._notebook) {
      return;
    }
    const awaiting = ledgers.reduce((n, l) => n + awaitingCount(l), 0);
    if (awaiting !== this._awaiting) {
      this._awaiting = awaiting;
      this._emit('badges');
    }
    this._ledgersRead = true;
    if (this._tab !== 'ledger' || !ledgers.length) {
      this._ledger = { ...this._ledger, ledgers };
      this._emit('ledger');
      return;
    }
    let name = this._ledger.name;
    if (!name || !ledgers.some(l => l.name === name)) {
      name = (ledgers.find(l => l.name === 'main') ?? ledgers[0]).name;
      this._ledger = { ...this._ledger, name };
    }
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
        error: broken?.error || errorText(err)
      };
    }
    if (nb !== this._notebook || name !== this._ledger.name) {
      return;
    }
    this._ledger = { ...this._ledger, ledgers, fold };
    this._emit('ledger');
  }
}
