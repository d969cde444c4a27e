/**
 * Records as cards: the side panel's list and timeline, and the notebook's record output
 * (spec: reckoner.md section 2; upstream-facts.md 3.12 "Panel").
 *
 * - The list pins the open record (badge "incomplete"), then closed records newest first,
 *   then set-aside and unreadable files.
 * - The timeline starts with a header card (id, visible rows, refused rows, end time or
 *   badge). Consecutive accepted `set` rows collapse into one "Writes (n)" card, `get` rows
 *   into "Reads (n)", consecutive refusals into a red "Failed attempts (n)" card; each
 *   accepted `eval` has its own card (formula, written slot and rev, each slot it read with a
 *   chip that jumps to that slot's write, the result); markers are accent-striped cards; a
 *   lookup (`search`) has its own card with collapsible sources.
 * - Refused rows and hidden notes (`record_message` with `hide`) show only with "show all".
 * - The record output (`application/vnd.dsh.record+json`, `{title, status, steps}`) is drawn
 *   with the same cards, one per step, refused steps in red.
 */

import { badge, h, when } from './dom';
import { valueText } from './format';
import type { IRecordDetail, IRecordRow, IRecordSummary } from './api';

// ----------------------------------------------------------------------------- list

const STATUS_ORDER: { [s: string]: number } = {
  open: 0,
  closed: 1,
  'set aside': 2,
  unreadable: 3
};

/** The list's order: the open record, closed newest first, set aside, unreadable. */
export function sortRecords(records: IRecordSummary[]): IRecordSummary[] {
  return [...records].sort((a, b) => {
    const sa = STATUS_ORDER[a.status] ?? 2;
    const sb = STATUS_ORDER[b.status] ?? 2;
    if (sa !== sb) {
      return sa - sb;
    }
    return (b.closed ?? b.opened ?? 0) - (a.closed ?? a.opened ?? 0);
  });
}

export function recordList(
  records: IRecordSummary[],
  onOpen: (id: string) => void
): HTMLElement {
  if (!records.length) {
    return h(
      'div',
      { class: 'dsh-empty', 'data-testid': 'dsh-records-empty' },
      'No records yet: a %%reckon cell writes one.'
    );
  }
  const rows = sortRecords(records).map(r => {
    const status =
      r.status === 'open'
        ? badge('incomplete', 'warn')
        : r.status === 'closed'
          ? badge('closed', 'ok')
          : badge(r.status, 'error');
    const counts =
      r.status === 'unreadable'
        ? (r.error ?? 'cannot be read')
        : `${r.steps ?? 0} step(s)` +
          (r.refused ? ` · ${r.refused} refused` : '') +
          ` · ${r.closed ? when(r.closed) : 'opened ' + when(r.opened)}`;
    return h(
      'li',
      {
        class: `dsh-record-row dsh-status-${r.status.replace(/\s+/g, '-')}`,
        'data-testid': 'dsh-record-row',
        'data-record-id': r.id,
        tabindex: 0,
        title: `record ${r.id}`,
        onclick: () => onOpen(r.id),
        onkeydown: ((ev: KeyboardEvent) => {
          if (ev.key === 'Enter') {
            onOpen(r.id);
          }
        }) as EventListener
      },
      h(
        'div',
        { class: 'dsh-record-title' },
        h('span', {}, r.title || r.id),
        ' ',
        status
      ),
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

type Group =
  | { kind: 'writes' | 'reads' | 'failed'; rows: IRecordRow[] }
  | { kind: 'single'; rows: IRecordRow[] };

function groupRows(rows: IRecordRow[]): Group[] {
  const groups: Group[] = [];
  for (const r of rows) {
    const kind = !r.ok
      ? 'failed'
      : r.tool === 'set'
        ? 'writes'
        : r.tool === 'get'
          ? 'reads'
          : 'single';
    const last = groups[groups.length - 1];
    if (kind !== 'single' && last && last.kind === kind) {
      last.rows.push(r);
    } else {
      groups.push({ kind, rows: [r] } as Group);
    }
  }
  return groups;
}

function card(
  cls: string,
  title: (Node | string)[],
  ...body: (Node | string | null)[]
): HTMLElement {
  return h(
    'div',
    { class: `dsh-card ${cls}`, 'data-testid': 'dsh-step-card' },
    h('div', { class: 'dsh-card-title' }, title),
    body
  );
}

function seqChip(r: IRecordRow): HTMLElement {
  return h('span', { class: 'dsh-seq', title: `row ${r.seq}` }, `#${r.seq}`);
}

/** The timeline of one record. `showAll` reveals refused rows and hidden notes. */
export function recordTimeline(
  detail: IRecordDetail,
  showAll: boolean
): HTMLElement {
  const rows = (detail.rows || []).filter(r => r && typeof r.tool === 'string');
  const refused = rows.filter(r => !r.ok).length;
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
      `record ${detail.id} · ${shown.length} of ${rows.length} row(s) shown · ${refused} refused` +
        (hidden ? ` · ${hidden} hidden note(s)` : '') +
        ' · ',
      end
        ? `closed ${when(end.at ?? null)}`
        : detail.status === 'open'
          ? badge('incomplete', 'warn')
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
  const anchorId = (r: IRecordRow) => `dsh-row-${detail.id}-${r.seq}`;
  for (const g of groupRows(shown)) {
    if (g.kind === 'writes') {
      root.appendChild(
        card(
          'dsh-card-writes',
          [`Writes (${g.rows.length})`],
          h(
            'ul',
            { class: 'dsh-kv' },
            g.rows.map(r =>
              h(
                'li',
                { id: anchorId(r) },
                seqChip(r),
                ' ',
                h('code', {}, String(r.content?.name ?? '')),
                ' = ',
                valueText(r.content?.value)
              )
            )
          )
        )
      );
    } else if (g.kind === 'reads') {
      root.appendChild(
        card(
          'dsh-card-reads',
          [`Reads (${g.rows.length})`],
          h(
            'ul',
            { class: 'dsh-kv' },
            g.rows.map(r =>
              h(
                'li',
                {},
                seqChip(r),
                ' ',
                h('code', {}, String(r.content?.name ?? '')),
                ' → ',
                valueText(r.content?.value)
              )
            )
          )
        )
      );
    } else if (g.kind === 'failed') {
      root.appendChild(
        card(
          'dsh-card-failed',
          [`Failed attempts (${g.rows.length})`],
          h(
            'ul',
            { class: 'dsh-kv' },
            g.rows.map(r =>
              h(
                'li',
                { 'data-testid': 'dsh-refused-row' },
                seqChip(r),
                ` ${r.tool} `,
                h('b', {}, String(r.content?.code ?? 'refused')),
                ': ',
                String(r.content?.error ?? '')
              )
            )
          )
        )
      );
    } else {
      for (const r of g.rows) {
        root.appendChild(singleCard(r, anchorId(r), writeAnchor));
      }
    }
  }
  if (!shown.length) {
    root.appendChild(h('div', { class: 'dsh-empty' }, 'No rows to show.'));
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
  writeAnchor: (slot: string, before: number) => string | null
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
          h('code', {}, slot),
          ' = ',
          valueText(v),
          ' ',
          a
            ? h(
                'button',
                {
                  class: 'dsh-chip',
                  title: `show where ${slot} was written`,
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
          seqChip(r),
          ' ',
          h('code', {}, `${c.target ?? ''} = ${c.formula ?? ''}`),
          c.rev ? h('span', { class: 'dsh-muted' }, ` · rev ${c.rev}`) : ''
        ],
        reads.length ? h('ul', { class: 'dsh-kv' }, reads) : null,
        h(
          'div',
          { class: 'dsh-result' },
          h('code', {}, String(c.target ?? '')),
          ' = ',
          h('b', {}, valueText(c.result))
        )
      );
      break;
    }
    case 'record_start':
      el = card('dsh-card-marker', [seqChip(r), ' start'], String(c.title ?? ''));
      break;
    case 'record_end':
      el = card(
        'dsh-card-marker',
        [seqChip(r), ' end'],
        String(c.text ?? '(record closed)')
      );
      break;
    case 'record_message':
      el = card(
        `dsh-card-marker ${c.hide ? 'dsh-card-hidden' : ''}`,
        [seqChip(r), c.hide ? ' hidden note (for the article writer)' : ' note'],
        String(c.text ?? '')
      );
      break;
    case 'search': {
      const syn = c.synthesis || {};
      const used = Array.isArray(c.used) ? c.used : [];
      const candidates = Array.isArray(c.candidates) ? c.candidates : [];
      const sources = used.length ? used : candidates;
      const accent = !r.ok
        ? 'dsh-card-failed'
        : c.outcome && c.outcome !== 'answered'
          ? 'dsh-card-warn'
          : '';
      el = card(
        `dsh-card-search ${accent}`,
        [seqChip(r), ' lookup: ', String(c.question ?? '')],
        h(
          'div',
          {},
          h('b', {}, String(c.outcome ?? (r.ok ? '' : c.code ?? 'refused'))),
          syn.answer ? `: ${syn.answer}` : c.error ? `: ${c.error}` : ''
        ),
        sources.length
          ? h(
              'details',
              {},
              h('summary', {}, `sources (${sources.length})`),
              h(
                'ul',
                { class: 'dsh-kv' },
                sources.map((s: any) =>
                  h(
                    'li',
                    {},
                    typeof s === 'string'
                      ? s
                      : String(s.title ?? s.url ?? s.id ?? JSON.stringify(s))
                  )
                )
              )
            )
          : null
      );
      break;
    }
    default:
      el = card('', [seqChip(r), ` ${r.tool}`], JSON.stringify(c));
  }
  el.id = anchor;
  return el;
}

// ----------------------------------------------------------------------------- output

export interface IRecordBundle {
  title?: string;
  status?: string;
  steps?: {
    line?: number;
    source?: string;
    kind?: string;
    ok?: boolean;
    text?: string;
    code?: string | null;
    error?: string | null;
  }[];
}

const STATUS_WORD: { [s: string]: string } = {
  closed: 'closed',
  open: 'open (continues in the next cell)',
  refused: 'refused'
};

/** A `%%reckon` output as cards; hidden notes (`note!`) only with `showAll`. */
export function recordOutput(data: IRecordBundle, showAll: boolean): HTMLElement {
  const steps = Array.isArray(data.steps) ? data.steps : [];
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
        'record ',
        badge(
          STATUS_WORD[status] ?? status,
          status === 'closed' ? 'ok' : status === 'open' ? 'warn' : 'error'
        ),
        ` · ${steps.length} step(s)`
      )
    )
  );
  for (const s of steps) {
    if (s.kind === 'note!' && s.ok && !showAll) {
      continue;
    }
    const line = h('span', { class: 'dsh-seq' }, `${s.line ?? ''}`);
    if (!s.ok) {
      root.appendChild(
        h(
          'div',
          { class: 'dsh-card dsh-card-failed', 'data-testid': 'dsh-step-card' },
          h('div', { class: 'dsh-card-title' }, line, ' ✗ ', h('code', {}, s.source ?? '')),
          h('div', {}, h('b', {}, s.code ?? ''), ': ', s.error ?? '')
        )
      );
      continue;
    }
    const marker =
      s.kind === 'note' || s.kind === 'note!' || s.kind === 'end' || s.kind === 'delete';
    root.appendChild(
      h(
        'div',
        {
          class: `dsh-card ${marker ? 'dsh-card-marker' : 'dsh-card-eval'} ${s.kind === 'note!' ? 'dsh-card-hidden' : ''}`,
          'data-testid': 'dsh-step-card',
          title: s.source ?? ''
        },
        h('div', { class: 'dsh-card-row' }, line, ' ', marker ? h('i', {}, s.text ?? '') : h('code', {}, s.text ?? ''))
      )
    );
  }
  return root;
}
