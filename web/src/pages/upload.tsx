// Uploading books (issue 43): the upload page, and the drop zone the library page carries. Both are
// one form: the target library and one of its folders (an htmx fragment redrawn when the library
// changes), an optional subfolder, the files (chosen or dropped); upload.js sends each file on its own
// request to POST /api/libraries/<id>/uploads with a progress bar, and lists what came of it.

export interface UploadLibrary {
  id: string;
  name: string;
}
export interface UploadFolder {
  index: number;
  name: string;
  path?: string;
}

export const ACCEPT = '.epub,.kepub,.pdf,.cbz,.cbr,.cb7,.mobi,.prc,.azw,.azw3,.fb2,.zip';
const FORMATS = 'EPUB, KEPUB, PDF, CBZ, CBR, CB7, MOBI, PRC, AZW, AZW3, FB2';

export const sizeText = (n: number): string =>
  n >= 2 ** 30 ? `${Math.round((n / 2 ** 30) * 10) / 10} GiB` : n >= 2 ** 20 ? `${Math.round(n / 2 ** 20)} MiB` : `${Math.round(n / 1024)} KiB`;

/** The library and folder choice; `id` tells the page's and the drop zone's apart. */
export function UploadTargets({ id, libraries, library, folders }: { id: string; libraries: UploadLibrary[]; library: string | null; folders: UploadFolder[] }) {
  return (
    <div class="upload-targets" id={`${id}-targets`}>
      <div>
        <label for={`${id}-library`}>Library</label>
        <select id={`${id}-library`} name="library" hx-get={`/upload/targets?id=${id}`} hx-trigger="change" hx-target={`#${id}-targets`} hx-swap="outerHTML" hx-include="this">
          {libraries.map((l) => (
            <option key={l.id} value={l.id} selected={l.id === library}>
              {l.name}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for={`${id}-folder`}>Folder</label>
        <select id={`${id}-folder`} name="folder" disabled={folders.length === 0}>
          {folders.map((f) => (
            <option key={f.index} value={String(f.index)}>
              {f.path ?? f.name}
            </option>
          ))}
        </select>
      </div>
    </div>
  );
}

/** The form: targets, subfolder, files and the drop area, the results list. */
export function UploadForm(p: { id: string; libraries: UploadLibrary[]; library: string | null; folders: UploadFolder[]; maxBytes: number; compact?: boolean }) {
  const help = `${p.id}-help`;
  return (
    <form class={`upload card${p.compact ? ' upload-compact' : ''}`} id={p.id} data-upload data-max-bytes={String(p.maxBytes)} aria-describedby={help}>
      {p.libraries.length === 0 ? (
        <p class="muted">There is no library to upload into.</p>
      ) : (
        <>
          <UploadTargets id={p.id} libraries={p.libraries} library={p.library} folders={p.folders} />
          <label for={`${p.id}-subfolder`}>Subfolder (optional)</label>
          <input id={`${p.id}-subfolder`} name="subfolder" type="text" autocomplete="off" placeholder="Comics/Series name" aria-describedby={`${p.id}-subfolder-help`} />
          <p id={`${p.id}-subfolder-help`} class="muted">
            Made inside the folder when it is not there yet.
          </p>
          <div class="dropzone" data-dropzone>
            <label for={`${p.id}-files`}>Book files</label>
            <input id={`${p.id}-files`} name="files" type="file" multiple accept={ACCEPT} />
            <p class="muted">…or drop them here.</p>
          </div>
          <button type="submit" class="primary">
            Upload
          </button>
        </>
      )}
      <p id={help} class="muted">
        {`${FORMATS}; up to ${sizeText(p.maxBytes)} a file. A file already in the catalog is not added twice.`}
      </p>
      <ul class="plain upload-results" aria-label="Uploads" aria-live="polite" data-results />
    </form>
  );
}

export function UploadPage(p: { libraries: UploadLibrary[]; library: string | null; folders: UploadFolder[]; maxBytes: number }) {
  return (
    <>
      <h1>Upload books</h1>
      <p>
        Each file is stored in the folder you choose and catalogued like any other file there. <a href="/library">Back to the library</a>
      </p>
      <UploadForm id="upload" {...p} />
    </>
  );
}

/** The library page's drop zone: the form loads its choices when the page shows. */
export function UploadDrop({ library }: { library: string | undefined }) {
  const at = library ? `?${new URLSearchParams({ library })}` : '';
  return (
    <section class="upload-drop" aria-labelledby="upload-drop-title">
      <h2 id="upload-drop-title">Add books</h2>
      <p>
        Drop book files on the form below, or open the <a href={`/upload${at}`}>upload page</a>.
      </p>
      <div hx-get={`/upload/form${at}`} hx-trigger="load" hx-swap="outerHTML">
        <p class="muted">Loading the upload form…</p>
      </div>
    </section>
  );
}
