// The web app's main flows (web-app.ts) in headless Chromium, distributed mode: its read models fed
// over NATS. A file of its own, so it runs beside web.e2e (embedded) instead of after it.
import { describe, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { webAppFlows } from './web-app';
import { CHROMIUM, HAS_CHROMIUM } from './web-browser';

const distributed = (await availableModes()).includes('distributed');
if (!HAS_CHROMIUM) describe.skip(`the web app in a browser (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

if (distributed) describe.skipIf(!HAS_CHROMIUM)('web app (distributed)', () => webAppFlows('distributed'));
