import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '@bindery/contracts';
import { EventSchemaError, eventSchemas } from '../src/event-schemas';

const schemas = eventSchemas({
  'shelf.named.v1': Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }),
});

const stored = (type: string, data: unknown): StoredEvent => ({
  id: '00000000-0000-4000-8000-000000000001',
  type,
  source: 'test',
  streamId: 's',
  version: 1,
  position: 1,
  data,
  metadata: {},
  recordedAt: '2026-11-27T00:00:00.000Z',
});

describe('event schemas', () => {
  it('decodes an event of a known type, typed by its schema', () => {
    const e = schemas.decode(stored('shelf.named.v1', { id: '00000000-0000-4000-8000-000000000002', name: 'Later' }));
    expect(e?.type).toBe('shelf.named.v1');
    expect(e?.data.name).toBe('Later');
  });

  it('passes over a type that is not its own', () => {
    expect(schemas.decode(stored('shelf.other.v1', {}))).toBeNull();
    expect(schemas.has('shelf.other.v1')).toBe(false);
  });

  it('refuses data that does not match, naming the type and the place', () => {
    expect(() => schemas.decode(stored('shelf.named.v1', { id: 'nope', name: 'Later' }))).toThrow(EventSchemaError);
    expect(() => schemas.decode(stored('shelf.named.v1', { id: '00000000-0000-4000-8000-000000000002' }))).toThrow(/^event shelf\.named\.v1 does not match its contract schema/);
  });

  it('checks events before an append, including an unknown type', () => {
    expect(() => schemas.check([{ type: 'shelf.named.v1', data: { id: '00000000-0000-4000-8000-000000000002', name: 'x' } }])).not.toThrow();
    expect(() => schemas.check([{ type: 'shelf.gone.v1', data: {} }])).toThrow('event shelf.gone.v1 does not match its contract schema: no schema has this type');
  });
});
