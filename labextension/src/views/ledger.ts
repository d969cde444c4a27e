/**
 * The Ledger tab (spec: research.md "The explorer"; issue 22, item 5: one view per tab): a
 * ledger's decisions with their predicates, claims, sources with their bibliographic verdict,
 * and objections; Approve / Reject / Needs revision for a decision awaiting the person, behind a
 * confirmation. It draws the model's `ILedgerState`; payload strings go in as text, never as
 * HTML; a note being typed is kept in `notes` (the model's), so a redraw keeps it.
 */

import type { IDecisionView, Verdict } from '../api';
import { badge, code, h, yes } from '../dom';
import type { Trans } from '../i18n';
import type { ILedgerState, IPending } from '../model';

export interface ILedgerActions {
  select(name: string): void;
  ask(pending: IPending): void;
  cancel(): void;
  confirm(): void;
}

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

export function ledgerKey(notebook: string | null, state: ILedgerState, read: boolean): string {
  return `${notebook}:${read}:${JSON.stringify(state)}`;
}

/** The Ledger view's content (nothing until the ledgers were read). */
export function renderLedger(
  state: ILedgerState,
  read: boolean,
  notes: Map<string, string>,
  actions: ILedgerActions,
  trans: Trans
): Node[] {
  const ledgers = state.ledgers;
  if (!read) {
    return [];
  }
  if (!ledgers.length) {
    return [
      h(
        'div',
        { class: 'dsh-empty', 'data-testid': 'dsh-ledgers-empty' },
        trans.__('No research ledger yet: %ledger ask starts one.')
      )
    ];
  }
  const fold = state.fold;
  const name = state.name;
  if (!fold || !name) {
    return [];
  }
  const select = h('select', { 'data-testid': 'dsh-ledger-select' });
  for (const l of ledgers) {
    const events =
      l.events === null || l.events === undefined
        ? trans.__('cannot be read')
        : trans._n('%1 event', '%1 events', l.events);
    const opt = h('option', { value: l.name }, `${l.name} (${events})`);
    opt.selected = l.name === name;
    select.appendChild(opt);
  }
  select.addEventListener('change', () => actions.select(select.value));
  const decisions = fold.decisions || [];
  const claims = fold.claims || [];
  const sources = fold.sources || [];
  const objections = fold.objections || [];
  const open = objections.filter(o => o.state === 'open').length;
  const message = state.message;
  return [
    h(
      'div',
      { class: 'dsh-ledger', 'data-testid': 'dsh-ledger' },
      h(
        'div',
        { class: 'dsh-toolbar' },
        ledgers.length > 1 ? select : h('b', {}, trans.__('ledger %1', name)),
        h(
          'span',
          { class: 'dsh-muted' },
          ' ' +
            [
              trans._n('%1 event', '%1 events', fold.events ?? 0),
              trans._n('%1 decision', '%1 decisions', decisions.length),
              trans._n('%1 claim', '%1 claims', claims.length),
              trans._n('%1 source', '%1 sources', sources.length),
              trans._n('%1 open objection', '%1 open objections', open)
            ].join(' · ')
        )
      ),
      h(
        'div',
        { class: 'dsh-message', 'data-testid': 'dsh-ledger-message' },
        message ? h('span', { class: `dsh-${message.kind}` }, message.text) : null
      ),
      fold.error ? h('div', { class: 'dsh-error' }, trans.__('Ledger %1 cannot be read: %2', name, fold.error)) : null,
      fold.intact === false && !fold.error
        ? h(
            'div',
            { class: 'dsh-error' },
            trans.__('Ledger %1: its hash chain is broken (dsh-notebook verify says where).', name)
          )
        : null,
      h('h4', {}, trans.__('Decisions')),
      decisions.length
        ? decisions.map(d => decisionCard(d, state, notes, actions, trans))
        : h('div', { class: 'dsh-empty' }, trans.__('No decisions yet.')),
      h(
        'details',
        { open: true, 'data-testid': 'dsh-claims' },
        h('summary', {}, trans.__('Claims (%1)', claims.length)),
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
                    trans.__('verdicts: '),
                    (c.verdicts || []).map(v => v.verdict).join(', ') || trans.__('none'),
                    trans.__(' · eligible: '),
                    yes(c.eligible),
                    ` — ${c.reason}`
                  )
                )
              )
            )
          : h('div', { class: 'dsh-empty' }, trans.__('No claims yet.'))
      ),
      h(
        'details',
        { open: true, 'data-testid': 'dsh-sources' },
        h('summary', {}, trans.__('Sources (%1)', sources.length)),
        sources.length
          ? h(
              'ul',
              { class: 'dsh-kv' },
              sources.map(s => {
                const v = s.verdict ? SOURCE_VERDICTS[s.verdict] : undefined;
                return h(
                  'li',
                  { 'data-testid': 'dsh-source', 'data-verdict': s.verdict ?? 'unverified' },
                  code(s.source_id),
                  ' ',
                  s.title || s.identifier || '',
                  ' ',
                  badge(v ? trans.__(v.label) : (s.verdict ?? trans.__('unverified')), v ? v.kind : 'muted'),
                  (s.notices || []).length
                    ? h('div', { class: 'dsh-muted' }, trans.__('notices: %1', (s.notices || []).join(', ')))
                    : null,
                  h(
                    'div',
                    { class: 'dsh-muted' },
                    s.fulltext ? trans.__('fulltext linked') : trans.__('fulltext not linked')
                  )
                );
              })
            )
          : h('div', { class: 'dsh-empty' }, trans.__('No sources yet.'))
      ),
      h(
        'details',
        { open: true, 'data-testid': 'dsh-objections' },
        h('summary', {}, trans.__('Objections (%1 open, %2 resolved)', open, objections.length - open)),
        objections.length
          ? h(
              'ul',
              { class: 'dsh-kv' },
              objections.map(o =>
                h(
                  'li',
                  { 'data-testid': 'dsh-objection' },
                  code(o.objection_id),
                  trans.__(' on %1 %2: %3', o.target?.kind ?? '', o.target?.id ?? '', o.reason),
                  o.severity ? ` (${o.severity})` : '',
                  ' ',
                  badge(o.state, o.state === 'open' ? 'error' : 'ok'),
                  o.adjudication
                    ? h(
                        'div',
                        { class: 'dsh-muted' },
                        trans.__('adjudication: %1: %2', o.adjudication.verdict, o.adjudication.rationale)
                      )
                    : null
                )
              )
            )
          : h('div', { class: 'dsh-empty' }, trans.__('No objections.'))
      )
    )
  ];
}

function decisionCard(
  d: IDecisionView,
  state: ILedgerState,
  notes: Map<string, string>,
  actions: ILedgerActions,
  trans: Trans
): HTMLElement {
  const p = d.predicates;
  // once approval is requested (or decided) for this revision, "cannot request" is expected
  const asked = d.awaiting_person || d.human_decisions.some(hd => hd.revision === d.revision);
  const can = p.can_request_human_approval.value;
  const items = [
    h(
      'li',
      {},
      code('can_request_human_approval'),
      ': ',
      yes(can, true, asked && !can),
      ` — ${p.can_request_human_approval.reason}`
    ),
    h(
      'li',
      {},
      code('has_unresolved_objections'),
      ': ',
      yes(p.has_unresolved_objections.value, false),
      ` — ${p.has_unresolved_objections.reason}`
    ),
    ...d.claims.map(c =>
      h('li', {}, trans.__('claim '), code(c.claim_id), trans.__(' eligible: '), yes(c.eligible), ` — ${c.reason}`)
    ),
    ...d.human_decisions.map(hd =>
      h(
        'li',
        {},
        trans.__('human decision, revision %1: ', hd.revision),
        h('b', {}, hd.verdict),
        trans.__(' by %1 (%2)', hd.by ?? '', hd.channel ?? ''),
        hd.note ? ` — ${hd.note}` : ''
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
      trans.__(' · revision %1 · ', d.revision),
      badge(d.status, d.awaiting_person ? 'warn' : d.status === 'approved' ? 'ok' : '')
    ),
    h('div', {}, d.statement),
    d.confidence !== null && d.confidence !== undefined
      ? h(
          'div',
          { class: 'dsh-muted' },
          d.limitations
            ? trans.__('confidence %1; limitations: %2', d.confidence, d.limitations)
            : trans.__('confidence %1', d.confidence)
        )
      : null,
    h('ul', { class: 'dsh-kv' }, items)
  );
  if (!d.awaiting_person) {
    return card;
  }
  card.appendChild(
    h('div', { class: 'dsh-awaiting' }, h('b', {}, trans.__('Awaiting your decision')), trans.__(' for this revision.'))
  );
  const note = h('input', {
    type: 'text',
    class: 'dsh-note',
    placeholder: trans.__('note (optional)'),
    'data-testid': 'dsh-decision-note'
  });
  note.value = notes.get(d.decision_id) ?? '';
  note.addEventListener('input', () => notes.set(d.decision_id, note.value));
  const row = h('div', { class: 'dsh-toolbar' }, note);
  for (const [verdict, label, cls] of VERDICTS) {
    row.appendChild(
      h(
        'button',
        {
          class: `dsh-btn ${cls}`,
          'data-testid': `dsh-decide-${verdict}`,
          title: trans.__('%1 decision %2', trans.__(label), d.decision_id),
          onclick: () => actions.ask({ decision: d.decision_id, verdict, revision: d.revision })
        },
        trans.__(label)
      )
    );
  }
  card.appendChild(row);
  const pend = state.pending;
  if (pend && pend.decision === d.decision_id) {
    const text = notes.get(d.decision_id)?.trim() ?? '';
    card.appendChild(
      h(
        'div',
        { class: 'dsh-confirm', 'data-testid': 'dsh-confirm' },
        h(
          'div',
          {},
          trans.__('Record '),
          h('b', {}, pend.verdict),
          text
            ? trans.__(
                ' for decision %1 revision %2 with the note “%3”? This is written to the ledger and cannot be undone.',
                pend.decision,
                pend.revision,
                text
              )
            : trans.__(
                ' for decision %1 revision %2? This is written to the ledger and cannot be undone.',
                pend.decision,
                pend.revision
              )
        ),
        h(
          'div',
          { class: 'dsh-toolbar' },
          h(
            'button',
            { class: 'dsh-btn dsh-btn-primary', 'data-testid': 'dsh-confirm-yes', onclick: () => actions.confirm() },
            trans.__('Confirm')
          ),
          h(
            'button',
            { class: 'dsh-btn', 'data-testid': 'dsh-confirm-no', onclick: () => actions.cancel() },
            trans.__('Cancel')
          )
        )
      )
    );
  }
  return card;
}
