/**
 * Records as cards: the side panel's list and timeline, and the notebook's record output
 * (spec: reckoner.md section 2; upstream-facts.md 3.12 "Panel").
 *
 * - The list shows the records the notebook's outputs name first (in the notebook's order, as
 *   the route gives them), then the open record (badge "incomplete"), then the superseded
 *   ones (greyed, badge "superseded": a re-run replaced them), newest first, then set-aside
 *   and unreadable files. A record whose calculation stopped at a refusal is "refused" (red),
 *   never a green "closed".
 * - The timeline starts with a header card (id, visible rows, refused rows, end time or
 *   badge). Consecutive accepted `set` rows collapse into one "Writes (n)" card, `get` rows
 *   into "Reads (n)", consecutive refusals into a red "Failed attempts (n)" card; each
 *   accepted `eval` has its own card (formula, written slot and rev, each slot it read with a
 *   chip that jumps to that slot's write, the result); markers are accent-striped cards; a
 *   lookup (`search`) has its own card with collapsible sources.
 * - Refused rows and hidden notes (`record_message` with `hide`) show only with "show all".
 * - The record output (`application/vnd.dsh.record+json`, `{title, status, steps}`, one step
 *   per line of the cell) is drawn with the same cards: consecutive `given` lines as "Writes",
 *   shown values as "Reads", refused lines as red "Failed attempts", each formula its own card
 *   (formula, values substituted, result), notes and the end as accent-striped cards.
 * - With `typeset` (the renderer has a LaTeX typesetter), a step that carries `latex` shows its
 *   source line as written (`@` form, monospace) and beneath it a display-math block holding
 *   `\[latex\]` as text, for the typesetter to replace (mime.ts); without it, or for a step of
 *   an older output without `latex`, the plain `text` as before.
 * - Counts name what they count: the list's "N formulas evaluated" (the route's `steps`,
 *   accepted evaluations) and "M refused", the timeline's rows, the output's lines.
 */

import { badge, code, h, when } from './dom';
import { valueText } from './format';
import { english, Trans } from './i18n';
import type { IRecordDetail, IRecordRow, IRecordSummary } from './api';

// ----------------------------------------------------------------------------- list

const STATUS_ORDER: { [s: string]: number } = {
  open: 0,
  closed: 1,
  refused: 1,
  'set aside': 2,
  unreadable: 3
};

/**
 * The list's order: current records (named by the notebook) in the route's order, then the
 * open record, then closed and refused records newest first (the superseded ones, or all of
 * them when the route does not know the notebook), set aside, unreadable.
 */
export function sortRecords(records: IRecordSummary[]): IRecordSummary[] {
  const position = new Map(records.map((r, i) => [r.id, i]));
  return [...records].sort((a, b) => {
    const ca = a.current === true && a.status !== 'open' ? 0 : 1;
    const cb = b.current === true && b.status !== 'open' ? 0 : 1;
    if (ca !== cb) {
      return ca - cb;
    }
    if (ca === 0) {
      return (position.get(a.id) ?? 0) - (position.get(b.id) ?? 0);
    }
    const sa = STATUS_ORDER[a.status] ?? 2;
    const sb = STATUS_ORDER[b.status] ?? 2;
    if (sa !== sb) {
      return sa - sb;
    }
    return (b.closed ?? b.opened ?? 0) - (a.closed ?? a.opened ?? 0);
  });
}

/**
 * The Records list. `empty` replaces the empty list's sentence ("No records yet") when the
 * panel knows better (the notebook shows record outputs but its sidecar folder has none).
 */
export function recordList(
  records: IRecordSummary[],
  onOpen: (id: string) => void,
  empty?: string | null,
  trans: Trans = english
): HTMLElement {
  if (!records.length) {
    return h(
      'div',
      { class: empty ? 'dsh-notice' : 'dsh-empty', 'data-testid': 'dsh-records-empty' },
      empty || trans.__('No records yet: a %%reckon cell writes one.')
    );
  }
  const rows = sortRecords(records).map(r => {
    const superseded = r.current === false && r.status !== 'open';
    const status =
      r.status === 'open'
        ? badge(trans.__('incomplete'), 'warn')
        : superseded
          ? badge(trans.__('superseded · %1', r.status), 'muted')
          : r.status === 'closed'
            ? badge(trans.__('closed'), 'ok')
            : badge(r.status, 'error');
    const counts =
      r.status === 'unreadable'
        ? (r.error ?? trans.__('cannot be read'))
        : trans._n('%1 formula evaluated', '%1 formulas evaluated', r.steps ?? 0) +
          (r.refused ? trans.__(' · %1 refused', r.refused) : '') +
          ` · ${r.closed ? when(r.closed) : trans.__('opened %1', when(r.opened))}`;
    return h(
      'li',
      {
        class: `dsh-record-row dsh-status-${r.status.replace(/\s+/g, '-')}` + (superseded ? ' dsh-superseded' : ''),
        'data-current': r.current === null || r.current === undefined ? '' : String(r.current),
        'data-testid': 'dsh-record-row',
        'data-record-id': r.id,
        tabindex: 0,
        title: trans.__('record %1', r.id),
        onclick: () => onOpen(r.id),
        onkeydown: ((ev: KeyboardEvent) => {
          if (ev.key === 'Enter') {
            onOpen(r.id);
          }
        }) as EventListener
      },
      h('div', { class: 'dsh-record-title' }, h('span', {}, r.title || r.id), ' ', status),
      h('div', { class: 'dsh-muted' }, counts)
    );
  });
  return h('ul', { class: 'dsh-record-list', 'data-testid': 'dsh-record-list' }, rows);
}

// ----------------------------------------------------------------------------- timeline

function hiddenNote(r: IRecordRow): boolean {
  return r.tool === 'record_message' && !!r.content?.hide;
}

/** Whether a row shows without "show all". */
export function visibleRow(r: IRecordRow): boolean {
  return r.ok && !hiddenNote(r);
}

type Group = { kind: 'writes' | 'reads' | 'failed'; rows: IRecordRow[] } | { kind: 'single'; rows: IRecordRow[] };

function groupRows(rows: IRecordRow[]): Group[] {
  const groups: Group[] = [];
  for (const r of rows) {
    const kind = !r.ok ? 'failed' : r.tool === 'set' ? 'writes' : r.tool === 'get' ? 'reads' : 'single';
    const last = groups[groups.length - 1];
    if (kind !== 'single' && last && last.kind === kind) {
      last.rows.push(r);
    } else {
      groups.push({ kind, rows: [r] } as Group);
    }
  }
  return groups;
}

function card(cls: string, title: (Node | string)[], ...body: (Node | string | null)[]): HTMLElement {
  return h(
    'div',
    { class: `dsh-card ${cls}`, 'data-testid': 'dsh-step-card' },
    h('div', { class: 'dsh-card-title' }, title),
    body
  );
}

function seqChip(r: IRecordRow, trans: Trans = english): HTMLElement {
  return h('span', { class: 'dsh-seq', title: trans.__('row %1', r.seq) }, `#${r.seq}`);
}

/** The timeline of one record. `showAll` reveals refused rows and hidden notes. */
export function recordTimeline(detail: IRecordDetail, showAll: boolean, trans: Trans = english): HTMLElement {
  const rows = (detail.rows || []).filter(r => r && typeof r.tool === 'string');
  // as the Records list counts them (reckoner Record.summary): accepted evaluations, and
  // refused engine calls (a lookup without an answer is an outcome of the lookup, not a refusal)
  const evaluated = rows.filter(r => r.ok && r.tool === 'eval').length;
  const refused = rows.filter(r => !r.ok && r.tool !== 'search').length;
  const unanswered = rows.filter(r => !r.ok && r.tool === 'search').length;
  const hidden = rows.filter(hiddenNote).length;
  const shown = showAll ? rows : rows.filter(visibleRow);
  const end = [...rows].reverse().find(r => r.tool === 'record_end' && r.ok);
  const root = h('div', {
    class: 'dsh-timeline',
    'data-testid': 'dsh-record-timeline',
    'data-record-id': detail.id
  });
  const head = h(
    'div',
    { class: 'dsh-card dsh-card-header', 'data-testid': 'dsh-record-header' },
    h('div', { class: 'dsh-card-title' }, detail.title || detail.id),
    h(
      'div',
      { class: 'dsh-muted' },
      trans.__('record %1', detail.id) +
        ' · ' +
        trans._n('%1 formula evaluated', '%1 formulas evaluated', evaluated) +
        (refused ? trans.__(' · %1 refused', refused) : '') +
        (unanswered
          ? ' · ' + trans._n('%1 lookup without an answer', '%1 lookups without an answer', unanswered)
          : '') +
        ' · ' +
        trans._n('%2 of %1 row shown', '%2 of %1 rows shown', rows.length, shown.length) +
        (hidden ? ' · ' + trans._n('%1 hidden note', '%1 hidden notes', hidden) : '') +
        ' · ',
      end
        ? trans.__('closed %1', when(end.at ?? null))
        : detail.status === 'open'
          ? badge(trans.__('incomplete'), 'warn')
          : badge(detail.status, detail.status === 'closed' ? 'ok' : 'error')
    )
  );
  root.appendChild(head);
  // the latest write of each slot before a row, for the eval cards' chips
  const writeAnchor = (slot: string, before: number): string | null => {
    let found: string | null = null;
    for (const r of rows) {
      if (r.seq >= before) {
        break;
      }
      if (r.ok && r.tool === 'set' && r.content?.name === slot) {
        found = `dsh-row-${detail.id}-${r.seq}`;
      } else if (r.ok && r.tool === 'eval' && r.content?.target === slot) {
        found = `dsh-row-${detail.id}-${r.seq}`;
      }
    }
    return found;
  };
  // the display unit a slot was written with before row `before` (issue 18), for the values an eval read
  const unitOf = (slot: string, before: number): unknown => {
    let found: unknown = undefined;
    for (const r of rows) {
      if (r.seq >= before) {
        break;
      }
      if (
        r.ok &&
        ((r.tool === 'set' && r.content?.name === slot) || (r.tool === 'eval' && r.content?.target === slot))
      ) {
        found = r.content?.unit;
      }
    }
    return found;
  };
  const anchorId = (r: IRecordRow) => `dsh-row-${detail.id}-${r.seq}`;
  for (const g of groupRows(shown)) {
    if (g.kind === 'writes') {
      root.appendChild(
        card(
          'dsh-card-writes',
          [trans.__('Writes (%1)', g.rows.length)],
          h(
            'ul',
            { class: 'dsh-kv' },
            g.rows.map(r =>
              h(
                'li',
                { id: anchorId(r) },
                seqChip(r, trans),
                ' ',
                code(String(r.content?.name ?? '')),
                ' = ',
                valueText(r.content?.value, r.content?.unit)
              )
            )
          )
        )
      );
    } else if (g.kind === 'reads') {
      root.appendChild(
        card(
          'dsh-card-reads',
          [trans.__('Reads (%1)', g.rows.length)],
          h(
            'ul',
            { class: 'dsh-kv' },
            g.rows.map(r =>
              h(
                'li',
                {},
                seqChip(r, trans),
                ' ',
                code(String(r.content?.name ?? '')),
                ' → ',
                valueText(r.content?.value, r.content?.unit)
              )
            )
          )
        )
      );
    } else if (g.kind === 'failed') {
      root.appendChild(
        card(
          'dsh-card-failed',
          [trans.__('Failed attempts (%1)', g.rows.length)],
          h(
            'ul',
            { class: 'dsh-kv' },
            g.rows.map(r =>
              h(
                'li',
                { 'data-testid': 'dsh-refused-row' },
                seqChip(r, trans),
                ` ${r.tool} `,
                h('b', {}, String(r.content?.code ?? trans.__('refused'))),
                ': ',
                String(r.content?.error ?? '')
              )
            )
          )
        )
      );
    } else {
      for (const r of g.rows) {
        root.appendChild(singleCard(r, anchorId(r), writeAnchor, unitOf, trans));
      }
    }
  }
  if (!shown.length) {
    root.appendChild(h('div', { class: 'dsh-empty' }, trans.__('No rows to show.')));
  }
  return root;
}

function jump(anchor: string): void {
  const el = document.getElementById(anchor);
  if (el) {
    el.scrollIntoView({ block: 'center', behavior: 'smooth' });
    el.classList.add('dsh-flash');
    window.setTimeout(() => el.classList.remove('dsh-flash'), 1200);
  }
}

function singleCard(
  r: IRecordRow,
  anchor: string,
  writeAnchor: (slot: string, before: number) => string | null,
  unitOf: (slot: string, before: number) => unknown = () => undefined,
  trans: Trans = english
): HTMLElement {
  const c = r.content || {};
  let el: HTMLElement;
  switch (r.tool) {
    case 'eval': {
      const reads = Object.entries(c.vars || {}).map(([slot, v]) => {
        const a = writeAnchor(slot, r.seq);
        return h(
          'li',
          {},
          code(slot),
          ' = ',
          valueText(v, unitOf(slot, r.seq)),
          ' ',
          a
            ? h(
                'button',
                {
                  class: 'dsh-chip',
                  title: trans.__('show where %1 was written', slot),
                  onclick: () => jump(a)
                },
                `→ ${slot}`
              )
            : null
        );
      });
      el = card(
        'dsh-card-eval',
        [
          seqChip(r, trans),
          ' ',
          code(`${c.target ?? ''} = ${c.formula ?? ''}`),
          c.rev ? h('span', { class: 'dsh-muted' }, ` · rev ${c.rev}`) : ''
        ],
        reads.length ? h('ul', { class: 'dsh-kv' }, reads) : null,
        h('div', { class: 'dsh-result' }, code(String(c.target ?? '')), ' = ', h('b', {}, valueText(c.result, c.unit)))
      );
      break;
    }
    case 'record_start':
      el = card('dsh-card-marker', [seqChip(r, trans), trans.__(' start')], String(c.title ?? ''));
      break;
    case 'record_end':
      el = card(
        'dsh-card-marker',
        [seqChip(r, trans), trans.__(' end')],
        String(c.text ?? trans.__('(record closed)'))
      );
      break;
    case 'record_message':
      el = card(
        `dsh-card-marker ${c.hide ? 'dsh-card-hidden' : ''}`,
        [seqChip(r, trans), c.hide ? trans.__(' hidden note (for the article writer)') : trans.__(' note')],
        String(c.text ?? '')
      );
      break;
    case 'search': {
      const syn = c.synthesis || {};
      const used = Array.isArray(c.used) ? c.used : [];
      const candidates = Array.isArray(c.candidates) ? c.candidates : [];
      const sources = used.length ? used : candidates;
      const accent = !r.ok ? 'dsh-card-failed' : c.outcome && c.outcome !== 'answered' ? 'dsh-card-warn' : '';
      el = card(
        `dsh-card-search ${accent}`,
        [seqChip(r, trans), trans.__(' lookup: '), String(c.question ?? '')],
        h(
          'div',
          {},
          h('b', {}, String(c.outcome ?? (r.ok ? '' : (c.code ?? trans.__('refused'))))),
          syn.answer ? `: ${syn.answer}` : c.error ? `: ${c.error}` : ''
        ),
        sources.length
          ? h(
              'details',
              {},
              h('summary', {}, trans.__('sources (%1)', sources.length)),
              h(
                'ul',
                { class: 'dsh-kv' },
                sources.map((s: any) =>
                  h('li', {}, typeof s === 'string' ? s : String(s.title ?? s.url ?? s.id ?? JSON.stringify(s)))
                )
              )
            )
          : null
      );
      break;
    }
    default:
      el = card('', [seqChip(r, trans), ` ${r.tool}`], JSON.stringify(c));
  }
  el.id = anchor;
  return el;
}

// ----------------------------------------------------------------------------- output

/** One line of a `%%reckon` cell as its output bundle holds it (render.py `step_rows`). */
export interface IRecordStep {
  line?: number;
  source?: string;
  kind?: string;
  ok?: boolean;
  text?: string;
  /** the line as LaTeX (given, eval and show lines; absent in outputs written before it) */
  latex?: string | null;
  code?: string | null;
  error?: string | null;
}

export interface IRecordBundle {
  title?: string;
  status?: string;
  steps?: IRecordStep[];
}

const STATUS_WORD: { [s: string]: string } = {
  closed: 'closed',
  open: 'open (continues in the next cell)',
  refused: 'refused'
};

function lineChip(s: IRecordStep, trans: Trans = english): HTMLElement {
  return h('span', { class: 'dsh-seq', title: trans.__('line %1 of the cell', s.line ?? '?') }, `L${s.line ?? ''}`);
}

/** How a line of the cell groups, as the timeline groups its rows (set, get, refused). */
function stepKind(s: IRecordStep): 'writes' | 'reads' | 'failed' | 'single' {
  if (!s.ok) {
    return 'failed';
  }
  if (s.kind === 'given' || s.kind === 'delete') {
    return 'writes';
  }
  return s.kind === 'show' ? 'reads' : 'single';
}

/** `tau = @R*@C = (10000 Ω)·(0.00047 F) = 4.7 s` -> name, formula, substituted, result. */
function splitEval(text: string): { name: string; formula: string; values: string; result: string } | null {
  const parts = text.split(' = ');
  if (parts.length < 3) {
    return null;
  }
  return {
    name: parts[0],
    formula: parts[1],
    values: parts.slice(2, -1).join(' = '),
    result: parts[parts.length - 1]
  };
}

/**
 * A step's LaTeX as display math: `\[latex\]` as the block's text (never as HTML), which the
 * page's LaTeX typesetter finds and replaces, as JupyterLab's own `text/latex` rendering does.
 */
function mathBlock(s: IRecordStep): HTMLElement {
  return h('div', { class: 'dsh-math', 'data-testid': 'dsh-math', 'data-line': s.line ?? '' }, `\\[${s.latex}\\]`);
}

/** Whether a step is drawn as its source line and typeset math. */
function typesets(s: IRecordStep, typeset: boolean): boolean {
  return typeset && s.ok === true && typeof s.latex === 'string' && s.latex !== '';
}

function stepCard(s: IRecordStep, typeset: boolean, trans: Trans = english): HTMLElement {
  const text = s.text ?? '';
  if (typesets(s, typeset)) {
    return card(
      s.kind === 'eval' ? 'dsh-card-eval' : '',
      [lineChip(s, trans), ' ', code(s.source ?? '')],
      mathBlock(s)
    );
  }
  switch (s.kind) {
    case 'eval': {
      const e = splitEval(text);
      if (!e) {
        return card('dsh-card-eval', [lineChip(s, trans), ' ', code(text)]);
      }
      return card(
        'dsh-card-eval',
        [lineChip(s, trans), ' ', code(`${e.name} = ${e.formula}`)],
        e.values ? h('div', { class: 'dsh-muted' }, '= ', code(e.values)) : null,
        h('div', { class: 'dsh-result' }, code(e.name), ' = ', h('b', {}, e.result))
      );
    }
    case 'note':
      return card('dsh-card-marker', [lineChip(s, trans), trans.__(' note')], text);
    case 'note!':
      return card(
        'dsh-card-marker dsh-card-hidden',
        [lineChip(s, trans), trans.__(' hidden note (for the article writer)')],
        text
      );
    case 'end':
      return card('dsh-card-marker', [lineChip(s, trans), trans.__(' end')], text);
    default:
      return card('', [lineChip(s, trans), ' ', code(text || s.source || '')]);
  }
}

/**
 * A `%%reckon` output as the timeline's cards; hidden notes (`note!`) only with `showAll`.
 * The header counts the cell's lines (the bundle's steps), not the record's rows. With
 * `typeset`, steps with `latex` get their source line and a `.dsh-math` block each, which the
 * caller hands to its LaTeX typesetter.
 */
export function recordOutput(
  data: IRecordBundle,
  showAll: boolean,
  typeset = false,
  trans: Trans = english
): HTMLElement {
  const steps = Array.isArray(data.steps) ? data.steps.filter(s => s && typeof s === 'object') : [];
  const refused = steps.filter(s => !s.ok).length;
  const root = h('div', { class: 'dsh-record-output', 'data-testid': 'dsh-record-output' });
  const status = data.status ?? '';
  root.appendChild(
    h(
      'div',
      { class: 'dsh-card dsh-card-header' },
      h('div', { class: 'dsh-card-title' }, data.title ?? ''),
      h(
        'div',
        { class: 'dsh-muted' },
        trans.__('record '),
        badge(
          STATUS_WORD[status] ? trans.__(STATUS_WORD[status]) : status,
          status === 'closed' ? 'ok' : status === 'open' ? 'warn' : 'error'
        ),
        ' · ' + trans._n('%1 line', '%1 lines', steps.length) + (refused ? trans.__(' · %1 refused', refused) : '')
      )
    )
  );
  const shown = steps.filter(s => showAll || !(s.kind === 'note!' && s.ok));
  // consecutive lines of one kind share a card, as consecutive rows do in the timeline
  const groups: { kind: ReturnType<typeof stepKind>; steps: IRecordStep[] }[] = [];
  for (const s of shown) {
    const kind = stepKind(s);
    const last = groups[groups.length - 1];
    if (kind !== 'single' && last && last.kind === kind) {
      last.steps.push(s);
    } else {
      groups.push({ kind, steps: [s] });
    }
  }
  for (const g of groups) {
    if (g.kind === 'writes' || g.kind === 'reads') {
      root.appendChild(
        card(
          g.kind === 'writes' ? 'dsh-card-writes' : 'dsh-card-reads',
          [g.kind === 'writes' ? trans.__('Writes (%1)', g.steps.length) : trans.__('Reads (%1)', g.steps.length)],
          h(
            'ul',
            { class: 'dsh-kv' },
            g.steps.map(s =>
              typesets(s, typeset)
                ? h('li', { title: s.text ?? '' }, lineChip(s, trans), ' ', code(s.source ?? ''), mathBlock(s))
                : h('li', { title: s.source ?? '' }, lineChip(s, trans), ' ', code(s.text ?? ''))
            )
          )
        )
      );
    } else if (g.kind === 'failed') {
      root.appendChild(
        card(
          'dsh-card-failed',
          [trans.__('Failed attempts (%1)', g.steps.length)],
          h(
            'ul',
            { class: 'dsh-kv' },
            g.steps.map(s =>
              h(
                'li',
                { 'data-testid': 'dsh-refused-row' },
                lineChip(s, trans),
                ' ',
                code(s.source ?? ''),
                h('div', {}, h('b', {}, s.code ?? trans.__('refused')), ': ', s.error ?? '')
              )
            )
          )
        )
      );
    } else {
      for (const s of g.steps) {
        root.appendChild(stepCard(s, typeset, trans));
      }
    }
  }
  if (!shown.length) {
    root.appendChild(h('div', { class: 'dsh-empty' }, trans.__('No lines to show.')));
  }
  return root;
}
