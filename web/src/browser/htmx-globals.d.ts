// htmx runs before the page's own scripts (its deferred <script> comes first): its global and the
// events app.ts listens to, typed from htmx's own declarations.
type HtmxApi = typeof import('htmx.org').default;
type HtmxRequestConfig = import('htmx.org').HtmxRequestConfig;
type HtmxResponseInfo = import('htmx.org').HtmxResponseInfo;
type HtmxBeforeSwapDetails = import('htmx.org').HtmxBeforeSwapDetails;

declare const htmx: HtmxApi;
/** htmx adds the element an event is about to every event's detail. */
type HtmxDetail<T> = T & { elt: Element };

interface DocumentEventMap {
  'htmx:configRequest': CustomEvent<HtmxDetail<HtmxRequestConfig>>;
  'htmx:beforeSwap': CustomEvent<HtmxDetail<HtmxBeforeSwapDetails>>;
  'htmx:beforeRequest': CustomEvent<HtmxDetail<HtmxResponseInfo>>;
  'htmx:afterRequest': CustomEvent<HtmxDetail<HtmxResponseInfo>>;
  'htmx:afterSwap': CustomEvent<HtmxDetail<HtmxResponseInfo>>;
  'htmx:afterSettle': CustomEvent<HtmxDetail<HtmxResponseInfo>>;
}
