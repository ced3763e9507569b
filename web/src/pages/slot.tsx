// A translated sentence with markup inside it (a command in <code>, a name in <strong>): the whole
// sentence is one message whose placeholders are filled with markers, then each marker is replaced
// by its element, so the words around it stay in the translation's own order.
import type { ComponentChildren } from 'preact';
import type { I18n, MessageKey, Values } from '../i18n';

const MARK = (i: number) => `\u0001${i}\u0001`;

/** `t(key)` with each of `slots` (a placeholder's name → what to show there) put in its place. */
export function Sentence({ t, k, values = {}, slots }: { t: I18n['t']; k: MessageKey; values?: Values; slots: Record<string, ComponentChildren> }) {
  const names = Object.keys(slots);
  const text = t(k, { ...values, ...Object.fromEntries(names.map((n, i) => [n, MARK(i)])) });
  const parts = text.split(/\u0001(\d+)\u0001/);
  return <>{parts.map((p, i) => (i % 2 === 1 ? slots[names[Number(p)]!] : p))}</>;
}
