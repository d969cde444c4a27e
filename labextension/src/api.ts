/**
 * The side panel's client for the server extension's JSON routes (spec: storage.md
 * "Routes for the side panel").
 *
 * - Every request goes through `ServerConnection.makeRequest`, so jupyter-server's token,
 *   cookie and XSRF checks apply exactly as for JupyterLab's own calls.
 * - `PATH` is the notebook's path relative to the server root (a notebook panel's
 *   `context.path`); the server resolves it and refuses anything outside its root.
 * - A failed call raises `ApiError` with the route, the HTTP status and the server's message,
 *   so the panel can say what went wrong instead of showing an empty list.
 */

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

// The payload types are generated from the Python TypedDicts (dsh_notebook/server/payloads.py and
// the views' payload modules): python -m dsh_notebook.server.schema, then npm run gen:types.
// They are re-exported here under the names the panel uses.
import type {
  AcademicStatus,
  ClaimView,
  DecisionCard,
  DecisionRequest,
  Evidence,
  Insight,
  LedgerBrief,
  LedgerFold,
  ObjectionView,
  Predicate,
  RecordDetail,
  RecordRow,
  RecordSummary,
  Review,
  ReviewQuestion,
  Routes,
  SessionRow,
  SourceView
} from './generated/payloads';

export type * from './generated/payloads';

/** `GET/POST /dsh/api/academic`: the status object of academic.md. */
export type IAcademicStatus = AcademicStatus;
/** One row of `GET /dsh/api/records?notebook=PATH` (times in ms since the epoch). */
export type IRecordSummary = RecordSummary;
/** One trace row of a record file (upstream's row shape). */
export type IRecordRow = RecordRow;
/** `GET /dsh/api/records/ID?notebook=PATH`. */
export type IRecordDetail = RecordDetail;
export type IEvidence = Evidence;
export type IInsight = Insight;
/** One row of `GET /dsh/api/sessions?notebook=PATH` (`%chat list`). */
export type ISession = SessionRow;
/** A follow-up question asked about a review, with its answer (or the error it met). */
export type IReviewQuestion = ReviewQuestion;
/** A stored review (reviewer.md), as `GET /dsh/api/reviews?notebook=PATH` lists it. */
export type IReview = Review;
/** One row of `GET /dsh/api/ledgers?notebook=PATH`. */
export type ILedgerSummary = LedgerBrief;
export type IPredicate = Predicate;
/** The ledger decision card. */
export type IDecisionView = DecisionCard;
export type IClaimView = ClaimView;
export type IObjectionView = ObjectionView;
/** A source as the ledger's fold shows it (artifact/ledgers.py `source_view`). */
export type ISourceView = SourceView;
/** `GET /dsh/api/ledgers/NAME?notebook=PATH`: the fold summary. */
export type ILedgerFold = LedgerFold;
/** `POST /dsh/api/ledgers/NAME/decision`'s receipt (a refusal comes as an `ApiError`). */
export type IDecisionReceipt = Routes['decision'];

export type Verdict = DecisionRequest['verdict'];

/** A failed call: which route, which status, what the server said. */
export class ApiError extends Error {
  constructor(
    readonly route: string,
    readonly status: number,
    message: string
  ) {
    super(message);
  }
}

/** The routes, bound to one server connection. */
export class DshApi {
  constructor(readonly settings: ServerConnection.ISettings) {}

  async request<T>(route: string, query: { [key: string]: string } = {}, init: RequestInit = {}): Promise<T> {
    let url = URLExt.join(this.settings.baseUrl, 'dsh', 'api', route);
    const q = URLExt.objectToQueryString(query);
    if (Object.keys(query).length) {
      url += q;
    }
    let response: Response;
    try {
      response = await ServerConnection.makeRequest(url, init, this.settings);
    } catch (err) {
      throw new ApiError(route, 0, `the server could not be reached (${err})`);
    }
    const text = await response.text();
    let data: any = null;
    if (text) {
      try {
        data = JSON.parse(text);
      } catch {
        data = { message: text.slice(0, 200) };
      }
    }
    if (!response.ok) {
      const why = (data && (data.error || data.message || data.reason)) || response.statusText;
      throw new ApiError(
        route,
        response.status,
        `${init.method || 'GET'} /dsh/api/${route}: ${response.status} ${why}`
      );
    }
    return data as T;
  }

  academic(): Promise<IAcademicStatus> {
    return this.request<IAcademicStatus>('academic');
  }

  setAcademic(enabled: boolean): Promise<IAcademicStatus> {
    return this.request<IAcademicStatus>('academic', {}, { method: 'POST', body: JSON.stringify({ enabled }) });
  }

  records(notebook: string): Promise<IRecordSummary[]> {
    return this.request<IRecordSummary[]>('records', { notebook });
  }

  record(notebook: string, id: string): Promise<IRecordDetail> {
    return this.request<IRecordDetail>(`records/${encodeURIComponent(id)}`, { notebook });
  }

  sessions(notebook: string): Promise<ISession[]> {
    return this.request<ISession[]>('sessions', { notebook });
  }

  reviews(notebook: string): Promise<IReview[]> {
    return this.request<IReview[]>('reviews', { notebook });
  }

  ledgers(notebook: string): Promise<ILedgerSummary[]> {
    return this.request<ILedgerSummary[]>('ledgers', { notebook });
  }

  ledger(notebook: string, name: string): Promise<ILedgerFold> {
    return this.request<ILedgerFold>(`ledgers/${encodeURIComponent(name)}`, {
      notebook
    });
  }

  /**
   * Record the person's decision on `revision`, the revision the card showed: the server
   * refuses it (409, "reload") when the decision has moved on to another revision meanwhile.
   */
  decide(
    notebook: string,
    name: string,
    decision_id: string,
    revision: number,
    verdict: Verdict,
    note: string
  ): Promise<IDecisionReceipt> {
    return this.request<IDecisionReceipt>(
      `ledgers/${encodeURIComponent(name)}/decision`,
      { notebook },
      {
        method: 'POST',
        body: JSON.stringify({ decision_id, revision, verdict, note })
      }
    );
  }
}
