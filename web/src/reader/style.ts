// The reader's own styles beyond the app's stylesheet (app.css keeps the reader's base layout): the
// settings panel, the black theme, the picture viewer's fits, zoom and vertical mode, the page slider,
// and the phone's immersive mode with its safe areas. Adopted by the document (a constructed sheet is
// not inline style, so no CSP exception is involved) before the book is opened.

const CSS = `
.reader-black {
  --bg: #000000;
  --surface: #101010;
  --text: #d0d0d0;
  --muted: #a0a0a0;
  --border: #3a3a3a;
  --accent: #8ab4f8;
  --accent-text: #000000;
}
.reader-page body { background: var(--bg); }
.book-view { background: var(--bg); }
.reader-grid { display: grid; grid-template-columns: auto minmax(0, 1fr); align-items: center; gap: 0.5rem 0.8rem; }
.reader-grid label, .reader-grid > span { margin: 0; font-weight: 600; }
.reader-grid .reader-check { grid-column: 1 / -1; }
.reader-grid select { width: 100%; }
.reader-size { display: flex; align-items: center; gap: 0.5rem; }
.reader-size output { min-width: 4.5ch; text-align: center; }
.reader-settings label { margin: 0; }

/* pictures: the page fits the screen, its width, its height, or shows at its own size; zoomed, it pans */
.pages { position: relative; overflow: auto; touch-action: pan-x pan-y; overscroll-behavior: contain; }
.pages .page-image { flex: 0 0 auto; object-fit: contain; }
.pages[data-fit=screen] .page-image { max-width: var(--page-max-w, 100%); max-height: 100%; }
.pages[data-fit=width] { align-items: flex-start; }
.pages[data-fit=width] .page-image { width: var(--page-w, 100%); max-width: none; max-height: none; height: auto; }
.pages[data-fit=height] .page-image { height: 100%; max-width: none; max-height: none; width: auto; }
.pages[data-fit=original] .page-image { max-width: none; max-height: none; }
.pages.zoomed { justify-content: flex-start; align-items: flex-start; cursor: grab; }
.pages.zoomed .page-image { max-width: none; max-height: none; width: var(--zoom-w); height: auto; margin: auto; }
.pages.vertical { flex-direction: column; justify-content: flex-start; align-items: center; gap: 0; }
.pages.vertical .page-image { width: min(100%, var(--strip-w, 50rem)); max-width: none; max-height: none; height: auto; }
.pages.vertical.zoomed .page-image { width: var(--zoom-w); }
.pages.vertical .page-image:not([src]) { aspect-ratio: 2 / 3; }
.pages.vertical[data-fit=width] .page-image { width: 100%; }
.pages.vertical[data-fit=original] .page-image { width: auto; }
.pages[data-spread][data-fit=screen] .page-image { max-width: 50%; }
.pages[data-spread][data-fit=width] .page-image { width: 50%; }
/* a PDF page's text over its picture: transparent, selectable, each run stretched to its box */
.text-layer { position: absolute; overflow: hidden; line-height: 1; font-family: sans-serif; color: transparent; user-select: text; -webkit-user-select: text; z-index: 1; }
.text-layer[hidden] { display: none; }
.text-layer span { position: absolute; white-space: pre; transform-origin: 0 0; cursor: text; }
.text-layer ::selection { background: rgb(0 90 255 / 0.3); color: transparent; }
.text-layer .text-hit { background: rgb(255 200 0 / 0.45); color: transparent; border-radius: 0.1em; }

.reader-foot { position: relative; display: flex; align-items: center; gap: 0.8rem; padding: 0.3rem 0.8rem calc(0.3rem + env(safe-area-inset-bottom)); background: var(--surface); border-top: 1px solid var(--border); }
.reader-foot label { margin: 0; }
.reader-foot input[type=range] { flex: 1; width: auto; min-width: 0; accent-color: var(--accent); }
.reader-thumb { position: absolute; bottom: 100%; left: 50%; transform: translateX(-50%); margin: 0 0 0.4rem; padding: 0.3rem; background: var(--surface); border: 1px solid var(--border); border-radius: 0.35rem; text-align: center; z-index: 12; }
.reader-thumb[hidden] { display: none; }
.reader-thumb img { display: block; width: 8rem; height: 12rem; object-fit: contain; }
.reader-thumb figcaption { font-size: 0.85rem; }

/* safe areas (a phone's notch and home bar) */
.reader-bar { padding-top: max(0.4rem, env(safe-area-inset-top)); padding-left: max(0.8rem, env(safe-area-inset-left)); padding-right: max(0.8rem, env(safe-area-inset-right)); }
.reader { padding-left: env(safe-area-inset-left); padding-right: env(safe-area-inset-right); }

/* immersive (a phone, a touch screen): the book fills the screen; the chrome lies over it and hides */
.reader-immersive .reader-bar, .reader-immersive .reader-foot { position: absolute; left: 0; right: 0; z-index: 15; transition: transform 0.2s ease, visibility 0.2s; }
.reader-immersive .reader-bar { top: 0; }
.reader-immersive .reader-foot { bottom: 0; }
.reader-immersive body { position: relative; }
.reader-immersive .reader .turn { display: none; }
.reader-immersive .reader { padding-top: env(safe-area-inset-top); padding-bottom: env(safe-area-inset-bottom); }
.chrome-hidden .reader-bar { transform: translateY(-100%); visibility: hidden; }
.chrome-hidden .reader-foot { transform: translateY(100%); visibility: hidden; }
@media (prefers-reduced-motion: reduce) {
  .reader-immersive .reader-bar, .reader-immersive .reader-foot { transition: none; }
}
`;

export function adoptStyles() {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(CSS);
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
}
