/**
 * The renderer for `application/vnd.dsh.record+json` (spec: storage.md "What goes into the
 * notebook"; issue 18): a `%%reckon` output drawn with the side panel's timeline cards
 * (records.ts `recordOutput`): writes and reads grouped, one card per formula, refused lines in
 * red with their code and message. Hidden notes (`note!`) show behind a "show all" box. The
 * bundle's Markdown, HTML and plain-text renderings stay in the notebook for frontends without
 * this extension.
 *
 * - Typeset math: JupyterLab hands mime renderers its LaTeX typesetter
 *   (`IRendererOptions.latexTypesetter`, MathJax 3 in JupyterLab 4). Each step with `latex` gets
 *   a `.dsh-math` block holding `\[latex\]` as text (textContent, never HTML), and each block is
 *   typeset on its own, so a `$` in a source line or a note is never read as math.
 * - As JupyterLab's own `text/latex` renderer, the typesetting waits until the widget is in the
 *   page (MathJax measures what it draws): `renderModel` typesets when attached, otherwise
 *   `onAfterAttach` does. JupyterLab's MathJax loads lazily on the first `typeset` call, which
 *   returns a promise then; other typesetters may return nothing: both are awaited.
 * - Without a typesetter, or for outputs written before `latex` was added, the plain `text`.
 * - Its strings go through the translator JupyterLab hands renderers (`IRendererOptions.translator`).
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { h } from './dom';
import { DOMAIN, english, Trans } from './i18n';
import { IRecordBundle, recordOutput } from './records';

export const MIME_TYPE = 'application/vnd.dsh.record+json';

export class RecordRenderer extends Widget implements IRenderMime.IRenderer {
  private _data: IRecordBundle = {};
  private _showAll = false;
  private readonly _typesetter: IRenderMime.ILatexTypesetter | null;
  private readonly _trans: Trans;
  /** math blocks drawn and not yet handed to the typesetter */
  private _untypeset = false;

  constructor(options?: Partial<IRenderMime.IRendererOptions>) {
    super();
    this._typesetter = options?.latexTypesetter ?? null;
    this._trans = options?.translator?.load(DOMAIN) ?? english;
    this.addClass('dsh-record-renderer');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this._data = (model.data[MIME_TYPE] as IRecordBundle) || {};
    this._draw();
    await this._typeset();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    void this._typeset();
  }

  /** Hands each math block to the typesetter, once the widget is in the page. */
  private async _typeset(): Promise<void> {
    const typesetter = this._typesetter;
    if (!typesetter || !this._untypeset || !this.isAttached) {
      return;
    }
    this._untypeset = false;
    const blocks = Array.from(this.node.querySelectorAll<HTMLElement>('.dsh-math'));
    await Promise.all(
      blocks.map(async block => {
        try {
          await typesetter.typeset(block);
        } catch (err) {
          console.error('dsh-notebook: the LaTeX typesetter failed on a record line', err);
        }
      })
    );
  }

  private _draw(): void {
    const hidden = (this._data.steps || []).filter(s => s.kind === 'note!' && s.ok).length;
    this.node.replaceChildren(recordOutput(this._data, this._showAll, this._typesetter !== null, this._trans));
    this._untypeset = this._typesetter !== null;
    if (hidden) {
      const box = h('input', { type: 'checkbox', class: 'dsh-show-all' }) as HTMLInputElement;
      box.checked = this._showAll;
      box.addEventListener('change', () => {
        this._showAll = box.checked;
        this._draw();
        void this._typeset();
      });
      this.node.appendChild(
        h(
          'label',
          { class: 'dsh-muted dsh-show-all-label' },
          box,
          ' ',
          this._trans._n('show all (%1 hidden note)', 'show all (%1 hidden notes)', hidden)
        )
      );
    }
  }
}

const extension: IRenderMime.IExtension = {
  id: 'dsh-notebook:record-renderer',
  description: "Draws a %%reckon record output as the side panel's step cards, with typeset math.",
  rendererFactory: {
    safe: true,
    mimeTypes: [MIME_TYPE],
    createRenderer: options => new RecordRenderer(options)
  },
  rank: 0,
  dataType: 'json'
};

export default extension;
