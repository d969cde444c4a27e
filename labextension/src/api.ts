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

/** `GET/POST /dsh/api/academic`: the status object of academic.md (at least `enabled`). */
export interface IAcademicStatus {
  enabled: boolean;
  title?: string;
  lastError?: string | null;
  applied?: {
    provider?: string;
    model?: string;
    reasoningEffort?: string | null;
    maxTokens?: number | null;
    at?: string;
  } | null;
  gate?: { count?: number; lastAt?: string | null } | null;
}

/** One row of `GET /dsh/api/records?notebook=PATH` (times in ms since the epoch). */
export interface IRecordSummary {
  id: string;
  title: string | null;
  status: string;
  opened: number | null;
  closed: number | null;
  steps: number | null;
  refused: number | null;
  /** Named by the notebook's outputs (true), superseded by a re-run (false), unknown (null). */
  current?: boolean | null;
  error?: string;
}

/** One trace row of a record file (upstream's row shape). */
export interface IRecordRow {
  seq: number;
  at?: number;
  tool: string;
  ok: boolean;
  content?: { [key: string]: any };
}

/** `GET /dsh/api/records/ID?notebook=PATH`. */
export interface IRecordDetail {
  id: string;
  title: string | null;
  status: string;
  header?: { [key: string]: any } | null;
  rows: IRecordRow[];
  problems?: any[];
}

export interface IEvidence {
  marker?: string;
  quote?: string;
  verified?: boolean;
}

export interface IInsight {
  title?: string;
  confidence?: string | number;
  verified?: boolean;
  evidence?: IEvidence[];
  why?: string;
  suggestion?: string;
  check?: string;
}

/** One row of `GET /dsh/api/sessions?notebook=PATH` (`%chat list`). */
export interface ISession {
  id: string;
  name?: string;
  title?: string;
  preset?: string;
  model?: string;
  turns?: number;
  last?: string;
  started?: string;
  updated?: string;
  file?: string;
}

/** A follow-up question asked about a review, with its answer (or the error it met). */
export interface IReviewQuestion {
  seq?: number;
  ts?: string;
  question?: string;
  answer?: string | null;
  error?: string | null;
}

/**
 * A stored review (reviewer.md): the routes may wrap it as `{review: {...}}`. `target.path`
 * is relative to the notebook's folder when the target lies inside it
 * (`report.dsh/sessions/<id>.jsonl` for this notebook's chat).
 */
export interface IReview {
  id?: string;
  status?: string;
  verdict?: string;
  headline?: string;
  summary?: string;
  focus?: string;
  at?: string;
  model?: string;
  target?: { source?: string; path?: string; [key: string]: any };
  insights?: IInsight[];
  questions?: IReviewQuestion[];
  [key: string]: any;
}

/** One row of `GET /dsh/api/ledgers?notebook=PATH`. */
export interface ILedgerSummary {
  name: string;
  events: number;
  head?: string | null;
  intact?: boolean;
  awaiting?: number | string[] | null;
  error?: string;
}

export interface IPredicate {
  value: boolean;
  reason: string;
}

export interface IDecisionView {
  decision_id: string;
  question_id?: string;
  revision: number;
  statement: string;
  status: string;
  confidence?: number | string | null;
  limitations?: string;
  awaiting_person: boolean;
  predicates: {
    can_request_human_approval: IPredicate;
    has_unresolved_objections: IPredicate;
  };
  claims: { claim_id: string; eligible: boolean; reason: string }[];
  human_decisions: {
    revision: number;
    verdict: string;
    note?: string;
    by?: string;
    channel?: string;
  }[];
}

export interface IClaimView {
  claim_id: string;
  source_id: string;
  text: string;
  quote?: string;
  verdicts?: { verdict: string; rationale?: string }[];
  eligible: boolean;
  reason: string;
}

export interface IObjectionView {
  objection_id: string;
  target: { kind?: string; id?: string };
  reason: string;
  severity?: string;
  answers?: string[];
  adjudication?: { verdict: string; rationale: string } | null;
  state: string;
}

/** A source as the ledger's fold shows it (artifact/ledgers.py `source_view`). */
export interface ISourceView {
  source_id: string;
  kind?: string;
  identifier?: string;
  title?: string;
  verdict?: string | null;
  retracted?: boolean;
  withdrawn?: boolean;
  notices?: string[];
  fulltext?: { locator?: string; sha256?: string; bytes?: number } | null;
}

/** `GET /dsh/api/ledgers/NAME?notebook=PATH`: the fold summary. */
export interface ILedgerFold {
  name?: string;
  events: number;
  decisions: IDecisionView[];
  claims: IClaimView[];
  sources: ISourceView[];
  objections: IObjectionView[];
  timeline?: any[];
  intact?: boolean;
  error?: string;
  [key: string]: any;
}

export type Verdict = 'approved' | 'rejected' | 'needs_revision';

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

  async request<T>(
    route: string,
    query: { [key: string]: string } = {},
    init: RequestInit = {}
  ): Promise<T> {
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
      const why =
        (data && (data.error || data.message || data.reason)) ||
        response.statusText;
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
    return this.request<IAcademicStatus>(
      'academic',
      {},
      { method: 'POST', body: JSON.stringify({ enabled }) }
    );
  }

  records(notebook: string): Promise<IRecordSummary[]> {
    return this.request<IRecordSummary[]>('records', { notebook });
  }

  record(notebook: string, id: string): Promise<IRecordDetail> {
    return this.request<IRecordDetail>(
      `records/${encodeURIComponent(id)}`,
      { notebook }
    );
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
  ): Promise<any> {
    return this.request<any>(
      `ledgers/${encodeURIComponent(name)}/decision`,
      { notebook },
      {
        method: 'POST',
        body: JSON.stringify({ decision_id, revision, verdict, note })
      }
    );
  }
}
