// The official OPDS 2.0 and Readium Web Publication Manifest JSON schemas (copied unmodified into
// test/fixtures/opds2-schemas, see its README for their sources and licences), compiled with ajv.
// Their published texts have defects the loader works around without editing the files: a
// trailing comma, ids spelled `id` or `$id` over http:// and https://, and a regular expression
// that names one group twice.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import AjvModule, { type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ROOT } from '../support/bindery';

// CommonJS modules: their default export sits on `.default` when loaded from ESM
const Ajv = (AjvModule as unknown as { default?: typeof AjvModule }).default ?? AjvModule;
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
const DIR = join(ROOT, 'test/fixtures/opds2-schemas');
const BASES: Record<string, string> = { opds: 'https://drafts.opds.io/schema/', readium: 'https://readium.org/webpub-manifest/schema/' };

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : n.endsWith('.json') ? [p] : [];
  });
}

/** every `$ref` read over https://, as the schemas' own ids are */
function httpsRefs(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(httpsRefs);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = k === '$ref' && typeof x === 'string' ? x.replace(/^http:\/\/readium\.org\//u, 'https://readium.org/') : httpsRefs(x);
  return out;
}

/** JavaScript refuses a group name used twice; the second one is renamed, the pattern is otherwise unchanged */
function regExp(pattern: string, flags: string): RegExp {
  try {
    return new RegExp(pattern, flags);
  } catch {
    const seen = new Map<string, number>();
    return new RegExp(
      pattern.replace(/\(\?<([A-Za-z][A-Za-z0-9]*)>/gu, (_m, name: string) => {
        const n = (seen.get(name) ?? 0) + 1;
        seen.set(name, n);
        return n === 1 ? `(?<${name}>` : `(?<${name}${n}>`;
      }),
      flags,
    );
  }
}
regExp.code = 'new RegExp';

export interface Opds2Validator {
  feed(doc: unknown): string[];
  publication(doc: unknown): string[];
  manifest(doc: unknown): string[];
}

export function opds2Validator(): Opds2Validator {
  const ajv = new Ajv({ strict: false, validateSchema: false, allErrors: true, allowUnionTypes: true, code: { regExp } });
  addFormats(ajv);
  for (const f of files(DIR)) {
    const rel = relative(DIR, f).split('\\').join('/');
    const [top, ...rest] = rel.split('/');
    const text = readFileSync(f, 'utf8').replace(/,(\s*[}\]])/gu, '$1');
    const schema = httpsRefs(JSON.parse(text)) as Record<string, unknown>;
    delete schema.id;
    schema.$id = `${BASES[top!]}${rest.join('/')}`;
    ajv.addSchema(schema);
  }
  const run = (id: string) => {
    const v = ajv.getSchema(id);
    if (!v) throw new Error(`schema ${id} not loaded`);
    return (doc: unknown) => (v(doc) ? [] : (v.errors ?? []).map((e: ErrorObject) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`));
  };
  return {
    feed: run(`${BASES.opds}feed.schema.json`),
    publication: run(`${BASES.opds}publication.schema.json`),
    manifest: run(`${BASES.readium}publication.schema.json`),
  };
}
