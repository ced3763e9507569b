import { describe, expect, it } from 'vitest';
import { findBadText, textFault } from '../src/text';

describe('text the stores cannot carry', () => {
  it('NUL and C0 controls are faults; tab, line feed and carriage return are text', () => {
    expect(textFault('a\u0000b')).toBe('control');
    expect(textFault('\u001b[31m')).toBe('control');
    expect(textFault('a\tb\nc\r')).toBeNull();
    expect(textFault('Zoë 📚 \u202e')).toBeNull();
  });
  it('a lone surrogate is a fault, a pair is a character', () => {
    expect(textFault('a\ud800')).toBe('unicode');
    expect(textFault('\udc00a')).toBe('unicode');
    expect(textFault('\ud83d\udcda')).toBeNull();
  });
  it('finds the first bad string in values and keys, with its place', () => {
    expect(findBadText({ a: 'ok', b: ['x', 'y\u0000'] })).toEqual({ field: 'b[1]', fault: 'control', message: 'b[1] must not contain control characters' });
    expect(findBadText({ s: { 'k\u0000': 1 } })?.message).toBe('a field name in s must not contain control characters');
    expect(findBadText({ 'odd key!': '\ud800' })?.message).toBe('a field must be valid Unicode text');
    expect(findBadText(Object.assign(Object.create(null), { q: 'a\u0000' }))?.field).toBe('q');
    expect(findBadText(Buffer.from([0, 0]))).toBeNull();
    expect(findBadText({ n: 1, t: true, z: null, s: 'fine' })).toBeNull();
  });
  it('walks deep values without recursion', () => {
    let v: unknown = 'x\u0000';
    for (let i = 0; i < 100_000; i++) v = [v];
    expect(findBadText(v)?.fault).toBe('control');
  });
});
