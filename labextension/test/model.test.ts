/**
 * model.ts: what one round reads and says (no timers: `update()` runs a round now; the poll is
 * never started here).
 */
import type { DshApi } from '../src/api';
import { DshModel, MemoryPreferences, Part } from '../src/model';

function fakeApi(over: Partial<Record<keyof DshApi, any>> = {}): DshApi {
  const api = {
    academic: async () => ({ enabled: false }),
    records: async () => [],
    reviews: async () => [{ id: 'rv2', verdict: 'ok' }],
    sessions: async () => [],
    ledgers: async () => [{ name: 'main', events: 3, awaiting: ['d1', 'd2'] }],
    ledger: async () => ({ events: 3, decisions: [], claims: [], sources: [], objections: [] }),
    ...over
  };
  return api as unknown as DshApi;
}

describe('DshModel', () => {
  it('reads the shown tab and the badges, and says which parts changed', async () => {
    const prefs = new MemoryPreferences();
    prefs.setSeenReview('a.ipynb', 'rv1');
    const model = new DshModel(fakeApi(), prefs);
    const parts: Part[] = [];
    model.changed.connect((_m, part) => parts.push(part));
    model.setNotebook('a.ipynb');
    expect(await model.update()).toEqual([]);
    expect(model.records).toEqual({ view: 'list', list: [], shownOutputs: 0 });
    expect(model.badges).toEqual({ reviewerNew: true, awaiting: 2 });
    expect(parts).toEqual(expect.arrayContaining(['notebook', 'records', 'reviewer', 'ledger', 'badges']));
    model.setTab('reviewer');
    expect(model.badges.reviewerNew).toBe(false);
    expect(prefs.seenReview('a.ipynb')).toBe('rv2');
    model.dispose();
  });

  it('shows a failed request in the status line and rejects the poll round, so the poll backs off', async () => {
    const err = Object.assign(new Error('GET /dsh/api/reviews: 404 Not Found'), { route: 'reviews', status: 404 });
    const model = new DshModel(fakeApi({ reviews: async () => Promise.reject(err) }));
    model.setNotebook('a.ipynb');
    const errors = await model.update();
    expect(errors).toEqual([
      'GET /dsh/api/reviews: 404 Not Found (is the dsh-notebook server extension enabled? see `jupyter server extension list`)'
    ]);
    expect(model.errors).toEqual(errors);
    await expect((model as any)._round()).rejects.toThrow('404 Not Found');
    model.dispose();
  });

  it('stands the poll by while the panel is hidden', () => {
    const model = new DshModel(fakeApi());
    const standby = model.poll.standby as () => boolean | string;
    expect(standby()).toBe(true);
    model.visible = true;
    expect(standby()).toBe('when-hidden');
    model.visible = false;
    expect(standby()).toBe(true);
    model.dispose();
  });
});
