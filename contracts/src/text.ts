// Text that no store or bus carries safely: NUL and the other C0 control characters (tab, line feed
// and carriage return excepted), and lone UTF-16 surrogates (JSON can spell them, UTF-8 cannot).
// The gateway refuses them at the door; services check again for callers on the bus.
import { controlCharacterMessage, malformedTextMessage } from './errors';

const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export type TextFault = 'control' | 'unicode';

export function textFault(s: string): TextFault | null {
  if (LONE_SURROGATE.test(s)) return 'unicode';
  if (CONTROL.test(s)) return 'control';
  return null;
}

export interface BadText {
  /** where the string sits, e.g. `username`, `settings.theme`, `tags[2]` */
  field: string;
  fault: TextFault;
  message: string;
}

const SAFE_NAME = /^[A-Za-z0-9_.\-*]{1,64}$/;

/**
 * The first string (value or object key) in a parsed JSON-like value that `textFault` refuses.
 * Walks with an explicit stack, so a deep value cannot overflow the call stack.
 */
export function findBadText(value: unknown, root = ''): BadText | null {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      const fault = textFault(v);
      if (fault) return bad(path, fault);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else if (isPlainObject(v)) {
      const entries = Object.entries(v);
      for (const [k] of entries) {
        const fault = textFault(k);
        if (fault) return bad(path === '' ? 'a field name' : `a field name in ${path}`, fault);
      }
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, x] = entries[i]!;
        // an odd (but harmless) name is not echoed back; where it sits is enough
        stack.push([x, path === '' ? (SAFE_NAME.test(k) ? k : 'a field') : SAFE_NAME.test(k) ? `${path}.${k}` : `a field in ${path}`]);
      }
    }
  }
  return null;
}

/** Parsed JSON, form and query values (a query parser's prototype-less records too); not a Buffer or a stream. */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) return false;
  return Object.prototype.toString.call(v) === '[object Object]' && typeof (v as { pipe?: unknown }).pipe !== 'function';
}

function bad(field: string, fault: TextFault): BadText {
  const name = field === '' ? 'the value' : field;
  return { field: name, fault, message: fault === 'control' ? controlCharacterMessage(name) : malformedTextMessage(name) };
}

/** A UUID in its canonical text form (any version), as every id in Bindery is. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: unknown): s is string => typeof s === 'string' && UUID_PATTERN.test(s);
