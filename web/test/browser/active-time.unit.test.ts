// The web reader's active reading time (decision 120): visible and an input or page turn within the
// last two minutes, taken by each save.
import { describe, expect, it } from 'vitest';
import { activeClock, IDLE_MS, MAX_ACTIVE_SECONDS } from '../../src/reader/active-time';

const S = 1000;

describe('activeClock', () => {
  it('counts while inputs come, at most IDLE_MS after the last one', () => {
    const c = activeClock(true, 0);
    c.touch(30 * S);
    c.touch(60 * S);
    expect(c.take(90 * S)).toBe(90);
    // no input since 60 s: active until 180 s, then away
    expect(c.take(600 * S)).toBe(90);
    expect(c.take(700 * S)).toBe(0);
    // back: counts again from the input
    c.touch(800 * S);
    expect(c.take(810 * S)).toBe(10);
  });

  it('a hidden page counts nothing; showing it again counts as an input', () => {
    const c = activeClock(true, 0);
    c.visible(false, 20 * S);
    c.touch(30 * S);
    expect(c.take(100 * S)).toBe(20);
    c.visible(true, 200 * S);
    expect(c.take(200 * S + IDLE_MS + 50 * S)).toBe(IDLE_MS / S);
  });

  it('a page opened hidden counts nothing until it is shown', () => {
    const c = activeClock(false, 0);
    c.touch(10 * S);
    expect(c.take(60 * S)).toBe(0);
    c.visible(true, 60 * S);
    expect(c.take(75 * S)).toBe(15);
  });

  it('keeps the part of a second not taken, and takes at most a day per save', () => {
    const c = activeClock(true, 0);
    expect(c.take(1500)).toBe(1);
    expect(c.take(2000)).toBe(1);
    const d = activeClock(true, 0);
    for (let t = 0; t <= 2 * MAX_ACTIVE_SECONDS * S; t += 60 * S) d.touch(t);
    expect(d.take(2 * MAX_ACTIVE_SECONDS * S)).toBe(MAX_ACTIVE_SECONDS);
    expect(d.take(2 * MAX_ACTIVE_SECONDS * S)).toBe(MAX_ACTIVE_SECONDS);
  });

  it('an input earlier than the last one does not shorten the window', () => {
    const c = activeClock(true, 0);
    c.touch(100 * S);
    c.touch(50 * S);
    expect(c.take(220 * S)).toBe(220);
  });
});
