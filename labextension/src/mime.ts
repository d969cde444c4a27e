/**
 * The renderer for `application/vnd.dsh.record+json` (spec: storage.md "What goes into the
 * notebook"): a `%%reckon` output drawn with the side panel's timeline cards (records.ts
 * `recordOutput`): writes and reads grouped, one card per formula, refused lines in red. Hidden
 * notes (`note!`) show behind a "show all" box. The bundle's Markdown, HTML and plain-text
 * renderings stay in the notebook for frontends without this extension.
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { h, plural } from './dom';
import { IRecordBundle, recordOutput } from './records';

export const MIME_TYPE = 'application/vnd.dsh.record+json';

export class RecordRenderer extends Widget implements IRenderMime.IRenderer {
  private _data: IRecordBundle = {};
  private _showAll = false;

  constructor() {
    super();
    this.addClass('dsh-record-renderer');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this._data = (model.data[MIME_TYPE] as IRecordBundle) || {};
    this._draw();
  }

  private _draw(): void {
    const hidden = (this._data.steps || []).filter(s => s.kind === 'note!' && s.ok).length;
    this.node.replaceChildren(recordOutput(this._data, this._showAll));
    if (hidden) {
      const box = h('input', { type: 'checkbox', class: 'dsh-show-all' }) as HTMLInputElement;
      box.checked = this._showAll;
      box.addEventListener('change', () => {
        this._showAll = box.checked;
        this._draw();
      });
      this.node.appendChild(
        h('label', { class: 'dsh-muted dsh-show-all-label' }, box, ` show all (${plural(hidden, 'hidden note')})`)
      );
    }
  }
}

const extension: IRenderMime.IExtension = {
  id: 'dsh-notebook:record-renderer',
  description: 'Draws a %%reckon record output as the side panel\'s step cards.',
  rendererFactory: {
    safe: true,
    mimeTypes: [MIME_TYPE],
    createRenderer: () => new RecordRenderer()
  },
  rank: 0,
  dataType: 'json'
};

export default extension;
