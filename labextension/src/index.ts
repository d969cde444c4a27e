/**
 * dsh-notebook's JupyterLab 4 extension (issue 8): the side panel and its wiring.
 *
 * - The panel (`DshPanel`) sits in the right sidebar behind the "DSH" icon; the command
 *   `dsh-notebook:open-panel` (also in the command palette) opens it.
 * - It follows the active notebook through the notebook tracker: the path it asks the
 *   server about is the notebook's `context.path` (relative to the server root), kept up to
 *   date on a rename, and it refreshes when that notebook is saved. It also reads that
 *   notebook's model to count its dsh outputs (`INotebookOutputs`), so it can tell a missing
 *   sidecar folder from a notebook that never ran.
 * - The person's preferences (schema/panel.json: "show all" in a record, the latest review seen
 *   per notebook) live in JupyterLab's settings registry (`ISettingRegistry`), read when the
 *   plugin starts and written back when they change; without a registry they last for the page.
 * - Its strings go through `ITranslator` (domain `dsh_notebook`).
 * - The record output renderer (`application/vnd.dsh.record+json`) is the separate mime
 *   extension in `mime.ts`.
 */

import { ILabShell, ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { DocumentRegistry } from '@jupyterlab/docregistry';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { LabIcon } from '@jupyterlab/ui-components';

import { DshApi } from './api';
import { DOMAIN } from './i18n';
import { IPreferences, MemoryPreferences } from './model';
import { DshPanel, INotebookOutputs } from './panel';

export { DshApi } from './api';
export { DshPanel } from './panel';

const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="currentColor">
    <path d="M3 3h11l4 4v4h-2V8h-3V5H5v14h6v2H3z"/>
    <path d="M7 9h5v1.6H7zM7 12.5h4v1.6H7zM7 16h3v1.6H7z"/>
    <path d="M17.5 12.5l4 4-5 5H12.5v-4zm0 2.3l-3.2 3.2v1.5h1.5l3.2-3.2z"/>
  </g>
</svg>`;

export const dshIcon = new LabIcon({ name: 'dsh-notebook:icon', svgstr: ICON_SVG });

const COMMAND = 'dsh-notebook:open-panel';
const PLUGIN_ID = 'dsh-notebook:panel';

/**
 * Preferences backed by the plugin's settings (schema/panel.json): read from `settings.composite`
 * and kept up to date when the person edits them in the Settings Editor; a change is written
 * with `settings.set` (a failure is logged, the value still holds for the page).
 */
export class SettingsPreferences implements IPreferences {
  private _memory = new MemoryPreferences();

  constructor(private readonly _settings: ISettingRegistry.ISettings) {
    this._read();
    _settings.changed.connect(() => this._read());
  }

  get showAll(): boolean {
    return this._memory.showAll;
  }

  setShowAll(value: boolean): void {
    this._memory.setShowAll(value);
    this._write('showAll', value);
  }

  seenReview(notebook: string): string | null {
    return this._memory.seenReview(notebook);
  }

  setSeenReview(notebook: string, key: string): void {
    this._memory.setSeenReview(notebook, key);
    const seen = { ...this._seenMap(), [notebook]: key };
    this._write('reviewsSeen', seen);
  }

  private _seenMap(): { [notebook: string]: string } {
    const seen = this._settings.composite.reviewsSeen;
    return seen && typeof seen === 'object' && !Array.isArray(seen) ? ({ ...seen } as { [k: string]: string }) : {};
  }

  private _read(): void {
    this._memory.setShowAll(this._settings.composite.showAll === true);
    for (const [nb, key] of Object.entries(this._seenMap())) {
      if (typeof key === 'string') {
        this._memory.setSeenReview(nb, key);
      }
    }
  }

  private _write(key: string, value: any): void {
    this._settings
      .set(key, value)
      .catch(err => console.warn(`dsh-notebook: the setting ${key} could not be saved`, err));
  }
}

/** Counts a notebook's outputs by mimetype, from its model as it is now (no save needed). */
function outputsOf(nb: NotebookPanel): INotebookOutputs {
  return {
    count: (mime, keep) => {
      let n = 0;
      const model = nb.isDisposed ? null : nb.model;
      if (!model) {
        return 0;
      }
      for (const cell of model.cells) {
        const outputs = cell.type === 'code' ? (cell as any).outputs : null;
        for (let i = 0; outputs && i < outputs.length; i++) {
          const data = outputs.get(i)?.data;
          if (data && mime in data && (!keep || keep(data[mime]))) {
            n++;
          }
        }
      }
      return n;
    }
  };
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description:
    'The dsh-notebook side panel: records, academic mode, reviewer and research ledger of the active notebook.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ILayoutRestorer, ILabShell, ICommandPalette, ISettingRegistry, ITranslator],
  activate: async (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    restorer: ILayoutRestorer | null,
    labShell: ILabShell | null,
    palette: ICommandPalette | null,
    registry: ISettingRegistry | null,
    translator: ITranslator | null
  ) => {
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    let prefs: IPreferences = new MemoryPreferences();
    if (registry) {
      try {
        prefs = new SettingsPreferences(await registry.load(PLUGIN_ID));
      } catch (err) {
        console.warn('dsh-notebook: the panel settings could not be loaded; preferences last for this page', err);
      }
    }
    const api = new DshApi(app.serviceManager.serverSettings);
    const panel = new DshPanel(api, prefs, trans);
    panel.title.icon = dshIcon;
    panel.title.caption = trans.__('dsh-notebook (DSH): records, academic mode, reviewer, ledger');
    app.shell.add(panel, 'right', { rank: 900 });
    if (restorer) {
      restorer.add(panel, 'dsh-notebook-panel');
    }

    let followed: NotebookPanel | null = null;
    const onSaved = (_ctx: DocumentRegistry.IContext<any>, state: DocumentRegistry.SaveState) => {
      if (state === 'completed') {
        panel.refresh();
      }
    };
    // the path the routes want: relative to the server root, without a drive prefix (RTC:)
    const serverPath = (nb: NotebookPanel) => app.serviceManager.contents.localPath(nb.context.path);
    const onRenamed = () => {
      panel.setNotebook(followed ? serverPath(followed) : null, followed ? outputsOf(followed) : null);
    };
    const follow = (nb: NotebookPanel | null) => {
      if (nb === followed) {
        return;
      }
      if (followed && !followed.isDisposed) {
        followed.context.saveState.disconnect(onSaved);
        followed.context.pathChanged.disconnect(onRenamed);
      }
      followed = nb;
      if (nb) {
        nb.context.saveState.connect(onSaved);
        nb.context.pathChanged.connect(onRenamed);
        void nb.context.ready.then(() => {
          if (followed === nb) {
            panel.setNotebook(serverPath(nb), outputsOf(nb));
          }
        });
        panel.setNotebook(serverPath(nb), outputsOf(nb));
      } else {
        panel.setNotebook(null);
      }
    };
    tracker.currentChanged.connect((_t, nb) => follow(nb));
    tracker.widgetAdded.connect((_t, nb) => {
      if (!followed) {
        follow(nb);
      }
    });
    follow(tracker.currentWidget);

    app.commands.addCommand(COMMAND, {
      label: trans.__('Open the dsh-notebook panel'),
      caption: trans.__('Records, academic mode, reviewer and research ledger of the active notebook'),
      execute: () => {
        if (labShell) {
          labShell.activateById(panel.id);
        } else {
          app.shell.activateById(panel.id);
        }
      }
    });
    if (palette) {
      palette.addItem({ command: COMMAND, category: 'dsh-notebook' });
    }
  }
};

export default plugin;
