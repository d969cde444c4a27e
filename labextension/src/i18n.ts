/**
 * Strings ready for translation (issue 22, item 5): every sentence the side panel shows goes
 * through a JupyterLab `TranslationBundle` (`ITranslator.load(DOMAIN)`), `%1`, `%2`, ... for
 * the values, `_n` for counts.
 *
 * - `Trans` is the part of `TranslationBundle` the panel uses, so the views' render functions
 *   can be tested without loading JupyterLab.
 * - `english` is the bundle without a translator: the message itself with its values filled
 *   in, as JupyterLab's `nullTranslator` does.
 */

import type { TranslationBundle } from '@jupyterlab/translation';

/** The translation domain of the panel's strings (the Python package's name). */
export const DOMAIN = 'dsh_notebook';

export type Trans = Pick<TranslationBundle, '__' | '_n'>;

/** `fill('%1 of %2', 1, 3)` -> `1 of 3` (JupyterLab's `Gettext.strfmt`). */
export function fill(text: string, ...args: unknown[]): string {
  return text.replace(/%(\d+)/g, (all, i: string) => {
    const k = Number(i) - 1;
    return k < args.length ? String(args[k]) : all;
  });
}

/** The untranslated bundle: English, values filled in. */
export const english: Trans = {
  __: (msgid: string, ...args: unknown[]) => fill(msgid, ...args),
  _n: (msgid: string, msgidPlural: string, n: number, ...args: unknown[]) =>
    fill(n === 1 ? msgid : msgidPlural, n, ...args)
};
