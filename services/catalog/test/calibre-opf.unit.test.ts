// readOpf on OPF documents calibre's backup can take that Debian's calibre 6 does not write (the int
// test covers those it writes): OPF 3 with refinements and one user_metadata object, and broken ones.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readOpf } from '../src/calibre/read-opf';

const root = mkdtempSync(join(tmpdir(), 'calibre-opf-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function book(folder: string, opf: string, files: string[] = []): string {
  const dir = join(root, folder);
  mkdirSync(dir, { recursive: true });
  for (const f of files) writeFileSync(join(dir, f), 'x');
  writeFileSync(join(dir, 'metadata.opf'), opf);
  return join(dir, 'metadata.opf');
}

const user = JSON.stringify({
  '#read': { label: 'read', name: 'Read', datatype: 'bool', '#value#': false },
  '#arc': { label: 'arc', name: 'Story arc', datatype: 'series', '#value#': 'Winter', '#extra#': 1.5 },
  '#score': { label: 'score', name: 'Score', datatype: 'composite', '#value#': 'x' },
  '#notes': { label: 'notes', name: 'Notes', datatype: 'comments', '#value#': '<p>Keep <b>this</b></p><script>x()</script>' },
});

const OPF3 = `<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uuid_id" prefix="calibre: https://calibre-ebook.com">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="calibre_id">calibre:42</dc:identifier>
    <dc:identifier id="uuid_id">urn:uuid:0d6c4f6a-1b1c-4f0e-9d4c-7f7c2b1d9e10</dc:identifier>
    <dc:identifier>isbn:978-0-306-40615-7</dc:identifier>
    <dc:identifier>goodreads:777</dc:identifier>
    <dc:title id="title">The Hollow Year</dc:title>
    <meta refines="#title" property="file-as">Hollow Year, The</meta>
    <dc:creator id="c1">Ada Byrne</dc:creator>
    <meta refines="#c1" property="role" scheme="marc:relators">aut</meta>
    <meta refines="#c1" property="file-as">Byrne, Ada</meta>
    <dc:creator id="c2">Lu Wei</dc:creator>
    <meta refines="#c2" property="role" scheme="marc:relators">aut</meta>
    <meta refines="#c2" property="file-as">Wei, Lu</meta>
    <dc:language>deu</dc:language>
    <dc:language>und</dc:language>
    <dc:date>2001-03-04T12:00:00+00:00</dc:date>
    <dc:publisher>North &amp; Sons</dc:publisher>
    <dc:subject>Essays</dc:subject>
    <dc:subject>Winter</dc:subject>
    <dc:description>&lt;p&gt;First &amp;amp; second.&lt;/p&gt;&lt;script&gt;steal()&lt;/script&gt;</dc:description>
    <meta property="belongs-to-collection" id="s1">Seasons</meta>
    <meta refines="#s1" property="collection-type">series</meta>
    <meta refines="#s1" property="group-position">3.25</meta>
    <meta property="calibre:rating">9</meta>
    <meta property="calibre:timestamp" scheme="dcterms:W3CDTF">2020-01-02T03:04:05+00:00</meta>
    <meta property="calibre:user_metadata">${user.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</meta>
  </metadata>
</package>`;

describe('readOpf', () => {
  it('reads an OPF 3 backup: refinements for sorts, collections for series, one user_metadata object', async () => {
    const path = book('Ada Byrne/The Hollow Year (42)', OPF3, ['The Hollow Year - Ada Byrne.epub', 'The Hollow Year - Ada Byrne.azw3', 'cover.jpg', 'notes.txt']);
    const b = await readOpf(path, root);
    const folder = 'Ada Byrne/The Hollow Year (42)';
    expect({ ...b, last_modified: null }).toEqual({
      id: 42,
      uuid: '0d6c4f6a-1b1c-4f0e-9d4c-7f7c2b1d9e10',
      path: folder,
      formats: [
        { format: 'azw3', path: `${folder}/The Hollow Year - Ada Byrne.azw3`, size: null },
        { format: 'epub', path: `${folder}/The Hollow Year - Ada Byrne.epub`, size: null },
      ],
      title: 'The Hollow Year',
      title_sort: 'Hollow Year, The',
      authors: [
        { name: 'Ada Byrne', sort: 'Byrne, Ada' },
        { name: 'Lu Wei', sort: 'Wei, Lu' },
      ],
      author_sort: 'Byrne, Ada',
      series: 'Seasons',
      series_index: 3.25,
      tags: ['Essays', 'Winter'],
      publisher: 'North & Sons',
      languages: ['de'],
      identifiers: { isbn: '9780306406157', goodreads: '777' },
      description: 'First & second.',
      year: 2001,
      rating: 9,
      has_cover: true,
      cover_path: `${folder}/cover.jpg`,
      added_at: '2020-01-02T03:04:05+00:00',
      last_modified: null,
      custom: [
        { label: 'arc', name: 'Story arc', type: 'series', value: 'Winter', series_index: 1.5, is_read: false },
        { label: 'notes', name: 'Notes', type: 'comments', value: 'Keep this', is_read: false },
        { label: 'read', name: 'Read', type: 'bool', value: false, is_read: true },
      ],
    });
    expect(b.last_modified).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
  });

  it('answers a broken, foreign or missing OPF with a clear error', async () => {
    const broken = book('broken', '<package><metadata><dc:title>Half');
    await expect(readOpf(broken)).rejects.toThrow(expect.objectContaining({ name: 'CalibreError', code: 'corrupt', message: `${broken} has no title (a cut-short or empty OPF)` }));
    const empty = book('empty', '');
    await expect(readOpf(empty)).rejects.toThrow(expect.objectContaining({ code: 'corrupt', message: `${empty} is not an OPF package document` }));
    const html = book('html', '<html><body>not an OPF</body></html>');
    await expect(readOpf(html)).rejects.toThrow(expect.objectContaining({ code: 'corrupt', message: `${html} is not an OPF package document` }));
    const none = join(root, 'none/metadata.opf');
    await expect(readOpf(none)).rejects.toThrow(expect.objectContaining({ code: 'missing' }));
    const outside = book('elsewhere', OPF3);
    await expect(readOpf(outside, join(root, 'library'))).rejects.toThrow(
      expect.objectContaining({ code: 'missing', message: `${outside} is not inside ${join(root, 'library')}` }),
    );
  });
});
