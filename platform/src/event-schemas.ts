// One place where events meet their contract schemas: a service checks what it appends, a consumer
// decodes what it reads (checked, then typed by its `type`) instead of casting `data`.
import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { NewEvent, StoredEvent } from '@bindery/contracts';

/** A stored event of one of the schemas' types, its `data` typed by that type's schema. */
export type DecodedEvent<M extends Record<string, TSchema>> = {
  [K in keyof M & string]: Omit<StoredEvent, 'type' | 'data'> & { type: K; data: Static<M[K]> };
}[keyof M & string];

/** An event whose data does not match the schema its type names: a producer's bug or a foreign writer. */
export class EventSchemaError extends Error {
  constructor(
    readonly type: string,
    readonly detail: string,
  ) {
    super(`event ${type} does not match its contract schema${detail ? `: ${detail}` : ''}`);
    this.name = 'EventSchemaError';
  }
}

export interface EventSchemas<M extends Record<string, TSchema>> {
  /** true when `type` is one of these */
  has(type: string): type is keyof M & string;
  /** Throws `EventSchemaError` unless every event's data matches its type's schema (before an append). */
  check(events: readonly NewEvent[]): void;
  /** The event typed by its schema; `null` for a type that is not one of these; throws on data that does not match. */
  decode(e: StoredEvent): DecodedEvent<M> | null;
}

/** compiled once per schema map, however many consumers ask */
const compiled = new WeakMap<object, EventSchemas<Record<string, TSchema>>>();

export function eventSchemas<M extends Record<string, TSchema>>(schemas: M): EventSchemas<M> {
  const hit = compiled.get(schemas);
  if (hit) return hit as unknown as EventSchemas<M>;
  const made = compile(schemas);
  compiled.set(schemas, made as unknown as EventSchemas<Record<string, TSchema>>);
  return made;
}

function compile<M extends Record<string, TSchema>>(schemas: M): EventSchemas<M> {
  const checks = new Map(Object.entries(schemas).map(([type, schema]) => [type, Compile(schema)]));
  const verify = (type: string, data: unknown): boolean => {
    const c = checks.get(type);
    if (!c) throw new EventSchemaError(type, 'no schema has this type');
    if (c.Check(data)) return true;
    const first = [...c.Errors(data)][0] as { instancePath?: string; message?: string } | undefined;
    throw new EventSchemaError(type, first ? `${first.instancePath || '/'} ${first.message ?? ''}`.trim() : '');
  };
  return {
    has: (type): type is keyof M & string => checks.has(type),
    check(events) {
      for (const e of events) verify(e.type, e.data);
    },
    decode(e) {
      if (!checks.has(e.type)) return null;
      verify(e.type, e.data);
      return e as unknown as DecodedEvent<M>;
    },
  };
}
