/**
 * The Reviewer tab (spec: reviewer.md; issue 22, item 5: one view per tab): the latest review of
 * this notebook's chat (or one chosen from the history), its target named as people know it,
 * insights expandable with their verbatim evidence, then the follow-up questions. It draws the
 * model's `IReviewerState`; payload strings go in as text, never as HTML.
 */

import type { IReview, IReviewQuestion, ISession } from '../api';
import { code, h, when } from '../dom';
import type { Trans } from '../i18n';
import { IReviewerState, reviewKey } from '../model';

/** A review target's source as the notebook's reviewer widget names it (widgets/reviewer.py). */
const SOURCE_LABELS: { [source: string]: string } = {
  dsh: 'DeepSeek Harness session',
  codex: 'Codex CLI conversation',
  claude: 'Claude Code conversation',
  chat: 'jupyter-ai chat'
};

/**
 * The session id when `r` reviewed a chat in this notebook's sidecar folder (`sidecar`,
 * `report.dsh/`): a `notebook` target whose path ends in `<stem>.dsh/sessions/<id>.jsonl`. The
 * route names it relative to the notebook's folder; a notebook copied from elsewhere keeps the
 * absolute path of the machine that ran it, so the last three parts decide.
 */
export function sessionOf(r: IReview, sidecar: string): string | null {
  const t = r.target;
  if (!t || t.source !== 'notebook' || typeof t.path !== 'string') {
    return null;
  }
  const parts = t.path.split(/[\\/]/);
  const file = parts.pop() ?? '';
  if (parts.pop() !== 'sessions' || parts.pop() + '/' !== sidecar) {
    return null;
  }
  return file.replace(/\.jsonl(\.zst)?$/, '');
}

/** The review's target as people know it, and the file it was read from (the tooltip). */
export function targetName(
  r: IReview,
  sidecar: string,
  sessions: ISession[],
  trans: Trans
): { text: string; title: string } {
  const t = r.target;
  if (!t || typeof t !== 'object') {
    return { text: '', title: '' };
  }
  const path = typeof t.path === 'string' ? t.path : '';
  const parts = path.split(/[\\/]/);
  const file = parts[parts.length - 1];
  const own = sessionOf(r, sidecar);
  const s = own === null ? undefined : sessions.find(x => x.id === own);
  const absolute = /^([\\/]|[A-Za-z]:)/.test(path);
  if (own !== null && (s || !absolute)) {
    const name = s?.name ? trans.__('session “%1”', s.name) : trans.__('session %1', own);
    const started = s?.started ? trans.__(' (started %1)', when(s.started)) : '';
    const first = s?.title ? trans.__(', which starts “%1”', s.title) : '';
    return { text: trans.__('this notebook’s chat, %1%2%3', name, started, first), title: path };
  }
  if (t.source === 'notebook') {
    // another notebook's chat: <other>.dsh/sessions/<id>.jsonl
    const folder = parts.length >= 3 ? parts[parts.length - 3] : '';
    const other = folder.endsWith('.dsh') ? folder.slice(0, -4) + '.ipynb' : folder || trans.__('another notebook');
    return { text: trans.__('%1’s chat, session %2', other, file.replace(/\.jsonl$/, '')), title: path };
  }
  const known = SOURCE_LABELS[String(t.source)];
  const label = known ? trans.__(known) : trans.__('%1 conversation', t.source ?? trans.__('unknown source'));
  return { text: `${label} ${file}`, title: path };
}

/** The follow-up questions asked about one review, with their answers, behind one expander. */
function questionList(questions: IReviewQuestion[], trans: Trans): HTMLElement {
  return h(
    'details',
    { class: 'dsh-questions', 'data-testid': 'dsh-review-questions' },
    h('summary', {}, h('b', {}, trans.__('Follow-up questions (%1)', questions.length))),
    questions.map(q =>
      h(
        'div',
        { class: 'dsh-question', 'data-testid': 'dsh-review-question' },
        h(
          'div',
          {},
          h('b', {}, trans.__('Q: ')),
          q.question ?? '',
          q.ts ? h('span', { class: 'dsh-muted' }, ` · ${when(q.ts)}`) : null
        ),
        q.answer
          ? h('div', { class: 'dsh-answer' }, h('b', {}, trans.__('A: ')), q.answer)
          : q.error
            ? h('div', { class: 'dsh-error' }, trans.__('Not answered: %1', q.error))
            : h('div', { class: 'dsh-empty' }, trans.__('No answer was recorded for this question.'))
      )
    )
  );
}

export function reviewerKey(notebook: string | null, state: IReviewerState): string {
  return `${notebook}:${JSON.stringify(state)}`;
}

/**
 * The Reviewer view's content: `sidecar` is the notebook's sidecar folder (`report.dsh/`),
 * `show(key)` picks a review from the history.
 */
export function renderReviewer(
  state: IReviewerState,
  sidecar: string,
  show: (key: string) => void,
  trans: Trans
): Node[] {
  const reviews = state.reviews;
  if (!reviews.length) {
    const shown = state.shownOutputs;
    return [
      shown
        ? h(
            'div',
            { class: 'dsh-notice', 'data-testid': 'dsh-reviews-empty' },
            trans.__(
              'This notebook shows %1, but its sidecar folder %2 has no review history (it was not copied with the notebook, or the notebook has not been run here): run the notebook, or %review, to review its chat here.',
              trans._n('%1 review output', '%1 review outputs', shown),
              sidecar
            )
          )
        : h(
            'div',
            { class: 'dsh-empty', 'data-testid': 'dsh-reviews-empty' },
            trans.__('No review of this notebook’s chat yet: %review runs one.')
          )
    ];
  }
  const current = reviews.find(r => reviewKey(r) === state.shown) ?? reviews[0];
  const select = h('select', { 'data-testid': 'dsh-review-history' });
  reviews.forEach((r, i) => {
    const opt = h(
      'option',
      { value: reviewKey(r) },
      `${i === 0 ? trans.__('latest') : `#${reviews.length - i}`} · ${r.verdict ?? ''} · ${when(r.at ?? null)}`
    );
    opt.selected = r === current;
    select.appendChild(opt);
  });
  select.addEventListener('change', () => show(select.value));
  const insights = current.insights || [];
  const target = targetName(current, sidecar, state.sessions, trans);
  const questions = (current.questions || []).filter(q => q && typeof q === 'object');
  return [
    h(
      'div',
      { class: 'dsh-review', 'data-testid': 'dsh-review' },
      reviews.length > 1 ? h('div', { class: 'dsh-toolbar' }, select) : null,
      h(
        'div',
        { class: 'dsh-card dsh-card-header' },
        h(
          'div',
          { class: 'dsh-card-title' },
          h('b', {}, current.verdict ?? trans.__('unknown')),
          ' · ',
          current.headline ?? ''
        ),
        current.summary ? h('div', {}, current.summary) : null,
        h(
          'div',
          { class: 'dsh-muted' },
          [current.focus ? trans.__('focus %1', current.focus) : '', when(current.at ?? null), current.model ?? '']
            .filter(Boolean)
            .join(' · ')
        ),
        target.text
          ? h(
              'div',
              { class: 'dsh-muted', 'data-testid': 'dsh-review-target', title: target.title },
              trans.__('Reviewed: %1', target.text)
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
                trans.__(' · confidence %1', ins.confidence ?? ''),
                ins.verified === false ? h('span', { class: 'dsh-warn' }, trans.__(' · unverified evidence')) : null
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
                      ? h('span', { class: 'dsh-warn' }, trans.__(' unverified: not found in the transcript'))
                      : null
                  )
                )
              ),
              h('div', {}, h('b', {}, trans.__('Why: ')), ins.why ?? ''),
              h('div', {}, h('b', {}, trans.__('Next: ')), ins.suggestion ?? ''),
              h('div', {}, h('b', {}, trans.__('Check: ')), ins.check ?? '')
            )
          )
        : h('div', { class: 'dsh-empty' }, trans.__('This review has no insights.')),
      questions.length ? questionList(questions, trans) : null
    )
  ];
}
