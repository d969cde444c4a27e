/**
 * The views' render functions (views/*.ts, records.ts): given a payload, the DOM shows its
 * numbers, units and text, and never live HTML from payload strings.
 */
import type { ILedgerFold, IRecordDetail, IReview } from '../src/api';
import { english, fill, Trans } from '../src/i18n';
import { recordOutput } from '../src/records';
import { MemoryPreferences } from '../src/model';
import { renderAcademic, academicTooltip } from '../src/views/academic';
import { renderLedger } from '../src/views/ledger';
import { renderRecords } from '../src/views/records';
import { renderReviewer } from '../src/views/reviewer';

const HOSTILE = '<img src=x onerror="window.__pwned=1">';
const OHM = [2, 1, -3, -2, 0, 0, 0];

function mount(nodes: Node[]): HTMLElement {
  const root = document.createElement('div');
  root.append(...nodes);
  return root;
}

function noLiveHtml(root: HTMLElement): void {
  expect(root.querySelector('img, script, iframe, a[href]')).toBeNull();
}

const noRecordActions = { open: () => undefined, setShowAll: () => undefined };

describe('the Records view', () => {
  it('lists the records with their counts, titles as text', () => {
    const root = mount(
      renderRecords(
        {
          view: 'list',
          shownOutputs: 0,
          list: [
            { id: '1', title: HOSTILE, status: 'closed', opened: 0, closed: 0, steps: 2, refused: 1, current: true },
            { id: '2', title: 'old run', status: 'closed', opened: 0, closed: 0, steps: 1, refused: 0, current: false }
          ]
        },
        false,
        'rc.dsh/',
        noRecordActions,
        english
      )
    );
    const rows = root.querySelectorAll('[data-testid=dsh-record-row]');
    expect(rows).toHaveLength(2);
    expect(rows[0].textContent).toContain(HOSTILE);
    expect(rows[0].textContent).toContain('2 formulas evaluated · 1 refused');
    expect(rows[1].textContent).toContain('superseded · closed');
    noLiveHtml(root);
  });

  it('says the sidecar folder is missing when the notebook shows record outputs', () => {
    const root = mount(
      renderRecords({ view: 'list', shownOutputs: 2, list: [] }, false, 'report.dsh/', noRecordActions, english)
    );
    expect(root.textContent).toContain('This notebook shows 2 record outputs, but its sidecar folder report.dsh/');
  });

  it('shows a record timeline with values in the units the cell gave them', () => {
    const detail: IRecordDetail = {
      id: 'r1',
      title: 'Wire',
      status: 'closed',
      rows: [
        {
          seq: 1,
          tool: 'set',
          ok: true,
          content: { name: 'R', value: { num: 10000, dim: OHM }, unit: [['kΩ', 1, 1000, OHM]] }
        },
        { seq: 2, tool: 'eval', ok: false, content: { code: 'ENGINE_INCOMPATIBLE_DIMENSION', error: HOSTILE } },
        { seq: 3, tool: 'record_end', ok: true, at: 0, content: { text: 'About 10 kΩ.' } }
      ]
    };
    const hidden = mount(
      renderRecords({ view: 'record', id: 'r1', detail, error: null }, false, 'x.dsh/', noRecordActions, english)
    );
    expect(hidden.textContent).toContain('R = 10 kΩ');
    expect(hidden.textContent).toContain('2 of 3 rows shown');
    expect(hidden.querySelector('[data-testid=dsh-refused-row]')).toBeNull();
    const all = mount(
      renderRecords({ view: 'record', id: 'r1', detail, error: null }, true, 'x.dsh/', noRecordActions, english)
    );
    const refused = all.querySelector('[data-testid=dsh-refused-row]')!;
    expect(refused.textContent).toContain('ENGINE_INCOMPATIBLE_DIMENSION: ' + HOSTILE);
    expect((all.querySelector('[data-testid=dsh-show-all]') as HTMLInputElement).checked).toBe(true);
    noLiveHtml(all);
  });

  it('says why a record cannot be shown', () => {
    const root = mount(
      renderRecords(
        { view: 'record', id: 'r9', detail: null, error: 'GET x: 404' },
        false,
        '',
        noRecordActions,
        english
      )
    );
    expect(root.querySelector('.dsh-error')!.textContent).toBe('Record r9 cannot be shown: GET x: 404');
  });
});

describe('the Academic view', () => {
  const status = {
    enabled: true,
    title: '学术模式',
    applied: {
      provider: 'deepseek',
      model: 'chat',
      reasoningEffort: 'high',
      maxTokens: 8000,
      at: '2026-11-29T19:42:00Z'
    },
    gate: { count: 1, lastAt: '2026-11-29T19:43:00Z' },
    lastError: HOSTILE
  };

  it('shows the switch, the last shaped request and the gate count', () => {
    const root = mount(renderAcademic({ status, error: '', busy: false }, () => undefined, english));
    const button = root.querySelector('[data-testid=dsh-academic-toggle]') as HTMLButtonElement;
    expect(button.textContent).toBe(' Academic modeon');
    expect(button.classList.contains('dsh-academic-on')).toBe(true);
    expect(button.getAttribute('aria-pressed')).toBe('true');
    expect(root.textContent).toContain('max_tokens 8000 (2026-11-29 19:42 UTC)');
    expect(root.querySelector('[data-testid=dsh-academic-gate]')!.textContent).toBe(
      'Delivery gate sent back 1 long reply for a verification log (last 2026-11-29 19:43 UTC).'
    );
    expect(root.querySelector('.dsh-error')!.textContent).toBe('Last error: ' + HOSTILE);
    noLiveHtml(root);
  });

  it('says the mode is off, with a tooltip as the notebook widget has it', () => {
    const off = { enabled: false, gate: { count: 2 } };
    expect(academicTooltip(off, english)).toBe(
      'Academic mode (学术模式) is off · delivery gate sent back 2 long replies for a verification log'
    );
    let clicks = 0;
    const root = mount(renderAcademic({ status: off, error: '', busy: false }, () => clicks++, english));
    (root.querySelector('button') as HTMLButtonElement).click();
    expect(clicks).toBe(1);
    expect(root.textContent).toContain('Off: model calls go out as configured.');
  });
});

describe('the Reviewer view', () => {
  const review: IReview = {
    id: 'rv1',
    verdict: 'concerns',
    headline: HOSTILE,
    at: '2026-11-29T19:42:00Z',
    target: { source: 'notebook', path: 'rc.dsh/sessions/s1.jsonl' },
    insights: [
      {
        title: 'Units',
        confidence: 0.8,
        evidence: [{ marker: 'T3', quote: HOSTILE, verified: false }],
        why: 'w',
        suggestion: 's',
        check: 'c'
      }
    ],
    questions: [{ question: 'Why?', answer: null, error: 'timed out' }]
  };

  it('shows the review, its target, its evidence as text and the follow-up questions', () => {
    const sessions = [{ id: 's1', name: 'wire', title: 'What is R?' }];
    const root = mount(
      renderReviewer({ reviews: [review], sessions, shown: null, shownOutputs: 0 }, 'rc.dsh/', () => undefined, english)
    );
    expect(root.querySelector('[data-testid=dsh-review-target]')!.textContent).toBe(
      'Reviewed: this notebook’s chat, session “wire”, which starts “What is R?”'
    );
    const insight = root.querySelector('[data-testid=dsh-insight]')!;
    expect(insight.textContent).toContain('1. Units · confidence 0.8');
    expect(insight.textContent).toContain(`“${HOSTILE}” unverified: not found in the transcript`);
    expect(root.textContent).toContain('Not answered: timed out');
    noLiveHtml(root);
  });

  it('says there is no review yet', () => {
    const root = mount(
      renderReviewer({ reviews: [], sessions: [], shown: null, shownOutputs: 0 }, 'rc.dsh/', () => undefined, english)
    );
    expect(root.textContent).toBe('No review of this notebook’s chat yet: %review runs one.');
  });
});

describe('the Ledger view', () => {
  const fold: ILedgerFold = {
    events: 7,
    decisions: [
      {
        decision_id: 'd1',
        revision: 2,
        statement: HOSTILE,
        status: 'awaiting_human',
        awaiting_person: true,
        predicates: {
          can_request_human_approval: { value: false, reason: 'already requested' },
          has_unresolved_objections: { value: false, reason: 'none open' }
        },
        claims: [{ claim_id: 'c1', eligible: true, reason: 'verified quote' }],
        human_decisions: []
      }
    ],
    claims: [],
    sources: [{ source_id: 's1', title: '<b>Heat-bath</b> random walks', verdict: 'withdrawn' }],
    objections: [{ objection_id: 'o1', target: { kind: 'claim', id: 'c1' }, reason: 'why', state: 'open' }]
  };

  it('counts what the ledger holds and shows a withdrawn source in red, its title as text', () => {
    const state = { ledgers: [{ name: 'main', events: 7 }], name: 'main', fold, pending: null, message: null };
    const actions = {
      select: () => undefined,
      ask: () => undefined,
      cancel: () => undefined,
      confirm: () => undefined
    };
    const root = mount(renderLedger(state, true, new Map(), actions, english));
    expect(root.querySelector('.dsh-toolbar')!.textContent).toBe(
      'ledger main 7 events · 1 decision · 0 claims · 1 source · 1 open objection'
    );
    const source = root.querySelector('[data-testid=dsh-source]')!;
    expect(source.querySelector('.dsh-badge-error')!.textContent).toBe('withdrawn');
    expect(source.textContent).toContain('<b>Heat-bath</b> random walks');
    expect(source.querySelector('b')).toBeNull();
    expect(root.querySelector('[data-testid=dsh-decision]')!.textContent).toContain(HOSTILE);
    expect(root.querySelector('[data-testid=dsh-objections] summary')!.textContent).toBe(
      'Objections (1 open, 0 resolved)'
    );
    noLiveHtml(root);
  });

  it('asks for confirmation with the note typed, then confirms', () => {
    const notes = new Map([['d1', 'checked twice']]);
    let asked: unknown = null;
    let confirmed = 0;
    const actions = {
      select: () => undefined,
      ask: (p: unknown) => (asked = p),
      cancel: () => undefined,
      confirm: () => confirmed++
    };
    const base = { ledgers: [{ name: 'main', events: 7 }], name: 'main', fold, message: null };
    const first = mount(renderLedger({ ...base, pending: null }, true, notes, actions, english));
    expect((first.querySelector('[data-testid=dsh-decision-note]') as HTMLInputElement).value).toBe('checked twice');
    (first.querySelector('[data-testid=dsh-decide-approved]') as HTMLButtonElement).click();
    expect(asked).toEqual({ decision: 'd1', verdict: 'approved', revision: 2 });
    const second = mount(
      renderLedger(
        { ...base, pending: { decision: 'd1', verdict: 'approved', revision: 2 } },
        true,
        notes,
        actions,
        english
      )
    );
    expect(second.querySelector('[data-testid=dsh-confirm]')!.textContent).toContain(
      'Record approved for decision d1 revision 2 with the note “checked twice”? This is written to the ledger and cannot be undone.'
    );
    (second.querySelector('[data-testid=dsh-confirm-yes]') as HTMLButtonElement).click();
    expect(confirmed).toBe(1);
  });

  it('says there is no ledger yet', () => {
    const state = { ledgers: [], name: null, fold: null, pending: null, message: null };
    const actions = {
      select: () => undefined,
      ask: () => undefined,
      cancel: () => undefined,
      confirm: () => undefined
    };
    expect(mount(renderLedger(state, true, new Map(), actions, english)).textContent).toBe(
      'No research ledger yet: %ledger ask starts one.'
    );
  });
});

describe('preferences in memory', () => {
  it('keeps the latest review seen per notebook', () => {
    const prefs = new MemoryPreferences();
    prefs.setSeenReview('a.ipynb', 'rv1');
    expect(prefs.seenReview('a.ipynb')).toBe('rv1');
    expect(prefs.seenReview('b.ipynb')).toBeNull();
  });
});

describe('translation', () => {
  // a translator that marks every message it translates, values filled in as JupyterLab does
  const marked: Trans = {
    __: (msgid: string, ...args: unknown[]) => `«${fill(msgid, ...args)}»`,
    _n: (one: string, many: string, n: number, ...args: unknown[]) => `«${fill(n === 1 ? one : many, n, ...args)}»`
  };

  it('sends the views’ sentences through the translator', () => {
    const state = { ledgers: [], name: null, fold: null, pending: null, message: null };
    const actions = {
      select: () => undefined,
      ask: () => undefined,
      cancel: () => undefined,
      confirm: () => undefined
    };
    expect(mount(renderLedger(state, true, new Map(), actions, marked)).textContent).toBe(
      '«No research ledger yet: %ledger ask starts one.»'
    );
    const list = mount(
      renderRecords({ view: 'list', shownOutputs: 0, list: [] }, false, 'x.dsh/', noRecordActions, marked)
    );
    expect(list.textContent).toBe('«No records yet: a %%reckon cell writes one.»');
  });

  it('sends the record output’s sentences through the translator', () => {
    const out = recordOutput(
      { title: 'T', status: 'closed', steps: [{ line: 1, kind: 'given', ok: true, text: 'R = 10 kΩ' }] },
      false,
      false,
      marked
    );
    expect(out.textContent).toContain('«record »«closed» · «1 line»');
    expect(out.textContent).toContain('«Writes (1)»');
  });
});
