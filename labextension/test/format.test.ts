/** format.ts: a record's values as people read them (numbers with their units). */
import { numText, shownUnit, unitText, valueText } from '../src/format';

const OHM = [2, 1, -3, -2, 0, 0, 0];

describe('unitText', () => {
  it('names a dimension with a named SI unit by its symbol', () => {
    expect(unitText(OHM)).toBe('Ω');
    expect(unitText([1, 1, -2, 0, 0, 0, 0])).toBe('N');
  });

  it('writes any other dimension as base units with superscript exponents, never Hz', () => {
    expect(unitText([1, 0, -1, 0, 0, 0, 0])).toBe('m·s⁻¹');
    expect(unitText([0, 0, -1, 0, 0, 0, 0])).toBe('s⁻¹');
    expect(unitText([-3, 1, 0, 0, 0, 0, 0])).toBe('m⁻³·kg');
    expect(unitText([0, 0, 0, 0, 0, 0, 0])).toBe('');
  });
});

describe('numText', () => {
  it('keeps at most six significant digits without trailing zeros', () => {
    expect(numText(0.127248211)).toBe('0.127248');
    expect(numText(2.5)).toBe('2.5');
    expect(numText(4.7, 3)).toBe('4.7');
  });

  it('writes very large and very small numbers with a power of ten', () => {
    expect(numText(1.68e-8)).toBe('1.68×10⁻⁸');
    expect(numText(2.5e7)).toBe('2.5×10⁷');
  });
});

describe('valueText', () => {
  it('shows a number with its SI unit', () => {
    expect(valueText({ num: 0.12725, dim: OHM })).toBe('0.12725 Ω');
  });

  it('shows a value in the unit the person wrote (issue 18)', () => {
    const kohm = [['kΩ', 1, 1000, OHM]];
    expect(shownUnit(kohm, OHM)).toEqual({ text: 'kΩ', factor: 1000 });
    expect(valueText({ num: 10000, dim: OHM }, kohm)).toBe('10 kΩ');
    const uF = [['µF', 1, 1e-6, [-2, -1, 4, 2, 0, 0, 0]]];
    expect(valueText({ num: 0.00047, dim: [-2, -1, 4, 2, 0, 0, 0] }, uF)).toBe('470 µF');
  });

  it('refuses a display unit of another dimension and shows SI instead', () => {
    const metres = [['mm', 1, 0.001, [1, 0, 0, 0, 0, 0, 0]]];
    expect(shownUnit(metres, OHM)).toBeNull();
    expect(valueText({ num: 2, dim: OHM }, metres)).toBe('2 Ω');
  });

  it('shows a temperature point on the scale it was given in', () => {
    expect(valueText({ num: 287.35, dim: [0, 0, 0, 0, 1, 0, 0], kind: 'point', scale: 'degC' })).toBe('14.2 °C');
  });

  it('shows complex numbers, arrays and deleted slots', () => {
    expect(valueText({ re: 3, im: -4, dim: OHM })).toBe('(3 − 4j) Ω');
    expect(valueText({ array: [1.5, 3, 4.5], dim: [2, 1, -3, -1, 0, 0, 0] })).toBe('[1.5, 3, 4.5] V');
    expect(valueText(null)).toBe('(deleted)');
  });
});
