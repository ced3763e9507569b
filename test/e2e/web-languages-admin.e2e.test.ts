// The administration, devices, sessions, mail and offline pages in the reader's language (issue 48),
// in headless Chromium against a Bindery that mails (a real SMTP server in this process): a German
// administrator by their browser's Accept-Language, a Japanese one by their profile over an English
// browser, and a French one by their profile over a German browser (the profile wins). Each page
// carries the language in `lang`, shows the translated words (exact strings), none of the English
// ones they replace, and is axe clean.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startBindery, type Bindery } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, scan } from './catalog-helpers';
import { api, register, uniq, type Account, type Call } from './helpers';
import { startMailServer, type MailServer } from './mail-helpers';
import { axeProblems, CHROMIUM, HAS_CHROMIUM, launch, openAs, PAGE_MODES } from './web-browser';

declare const document: { body: { textContent: string | null } };

type Lang = 'de' | 'ja' | 'fr';

/** Each page: its path, what to wait for, and per language [selector, exact text] pairs and the title. */
interface PageCheck {
  path: string;
  ready?: string[];
  title: Record<Lang, string>;
  shows: [string, Record<Lang, string>][];
  /** English words this page showed before issue 48 (none may remain) */
  english: string[];
}

const PAGES: PageCheck[] = [
  {
    path: '/admin/libraries',
    title: { de: 'Bibliotheken', ja: 'ライブラリ', fr: 'Bibliothèques' },
    shows: [
      ['h1', { de: 'Bibliotheken', ja: 'ライブラリ', fr: 'Bibliothèques' }],
      ['#create-title', { de: 'Bibliothek anlegen', ja: 'ライブラリを作成', fr: 'Créer une bibliothèque' }],
      ['#libraries caption', { de: 'Alle Bibliotheken dieses Servers', ja: 'このサーバーのすべてのライブラリ', fr: 'Toutes les bibliothèques de ce serveur' }],
      ['#create', { de: 'Anlegen', ja: '作成', fr: 'Créer' }],
      ['#change-title', { de: 'Bibliothek ändern', ja: 'ライブラリを変更', fr: 'Modifier une bibliothèque' }],
      ['nav.subnav a[href="/admin/conflicts"]', { de: 'Duplikate', ja: '重複', fr: 'Doublons' }],
    ],
    english: ['Create a library', 'Every library of this server', 'Server folders', 'Rescan', 'Change a library', 'Last scan', 'Duplicates'],
  },
  {
    path: '/admin/scanner',
    title: { de: 'Scanner', ja: 'スキャナー', fr: 'Analyse' },
    shows: [
      ['h1', { de: 'Scanner', ja: 'スキャナー', fr: 'Analyse' }],
      ['#scanner-summary', { de: 'Kein Scan läuft.', ja: '実行中のスキャンはありません。', fr: 'Aucune analyse en cours.' }],
      ['#scan-states .scan-state', { de: 'Bereit', ja: '待機中', fr: 'Inactif' }],
      ['#scan-now', { de: 'Jetzt scannen', ja: '今すぐスキャン', fr: 'Analyser maintenant' }],
      ['#issues-title', { de: 'Dateien, die der Scanner nicht lesen konnte', ja: 'スキャナーが読み取れなかったファイル', fr: 'Fichiers que l’analyse n’a pas pu lire' }],
    ],
    english: ['No scan is running.', 'Idle', 'Scan now', 'files seen', 'Files the scanner could not read', 'Latest scan', 'completed'],
  },
  {
    path: '/admin/conflicts',
    title: { de: 'Doppelte Bücher', ja: '重複している本', fr: 'Livres en double' },
    shows: [
      ['h1', { de: 'Doppelte Bücher', ja: '重複している本', fr: 'Livres en double' }],
      ['#no-conflicts', { de: 'Kein Duplikat wartet auf eine Entscheidung.', ja: '判断を待っている重複はありません。', fr: 'Aucun doublon n’attend de décision.' }],
    ],
    english: ['Duplicate books', 'No duplicate waits for a decision.', 'Files on disk are never deleted.'],
  },
  {
    path: '/admin/users',
    title: { de: 'Personen', ja: 'ユーザー', fr: 'Personnes' },
    shows: [
      ['h1', { de: 'Personen', ja: 'ユーザー', fr: 'Personnes' }],
      ['#add-title', { de: 'Person hinzufügen', ja: 'ユーザーを追加', fr: 'Ajouter une personne' }],
      ['#people-title', { de: 'Alle', ja: '全員', fr: 'Tout le monde' }],
      ['#add-user-submit', { de: 'Hinzufügen', ja: '追加', fr: 'Ajouter' }],
      ['label[for="new-username"]', { de: 'Benutzername', ja: 'ユーザー名', fr: 'Nom d’utilisateur' }],
    ],
    english: ['Add a person', 'Everyone', 'Maximum devices', 'Save role', 'Set password', 'Anyone you add'],
  },
  {
    path: '/admin/system',
    ready: ['#mail-card-title'],
    title: { de: 'System', ja: 'システム', fr: 'Système' },
    shows: [
      ['h1', { de: 'System', ja: 'システム', fr: 'Système' }],
      ['#projections-title', { de: 'Lesemodelle', ja: '読み取りモデル', fr: 'Modèles de lecture' }],
      ['#backup-download', { de: 'Jetzt eine Sicherung herunterladen', ja: '今すぐバックアップをダウンロード', fr: 'Télécharger une sauvegarde maintenant' }],
      ['#save-settings', { de: 'Einstellungen speichern', ja: '設定を保存', fr: 'Enregistrer les réglages' }],
      ['#settings-test-mail', { de: 'Test-E-Mail senden', ja: 'テストメールを送信', fr: 'Envoyer un e-mail de test' }],
    ],
    english: ['Read models', 'Download a backup now', 'Save settings', 'Send a test mail', 'Invitations and mail', 'Last rebuilt'],
  },
  {
    path: '/admin/mail',
    title: { de: 'E-Mail', ja: 'メール', fr: 'E-mail' },
    shows: [
      ['#test-title', { de: 'Test-E-Mail', ja: 'テストメール', fr: 'E-mail de test' }],
      ['#invite-title', { de: 'Jemanden einladen', ja: '招待する', fr: 'Inviter quelqu’un' }],
      ['#invite-send', { de: 'Einladung senden', ja: '招待を送信', fr: 'Envoyer l’invitation' }],
      ['#invitations', { de: 'Keine offenen Einladungen.', ja: '未使用の招待はありません。', fr: 'Aucune invitation en cours.' }],
    ],
    english: ['Test mail', 'Invite someone', 'Send the invitation', 'No open invitations.', 'Open invitations', 'Every library'],
  },
  {
    path: '/devices',
    title: { de: 'Geräte', ja: 'デバイス', fr: 'Appareils' },
    shows: [
      ['h1', { de: 'Geräte', ja: 'デバイス', fr: 'Appareils' }],
      [
        '#no-devices',
        {
          de: 'Noch kein Gerät. Fügen Sie eines mit den Schritten unten hinzu.',
          ja: 'デバイスはまだありません。下の手順で追加してください。',
          fr: 'Aucun appareil pour l’instant. Ajoutez-en un en suivant les étapes ci-dessous.',
        },
      ],
      ['#koreader-title', { de: 'Ein KOReader-Gerät hinzufügen', ja: 'KOReader デバイスを追加', fr: 'Ajouter un appareil KOReader' }],
      ['#opds-key-state', { de: 'Sie haben keinen Leseschlüssel.', ja: 'リーダーキーはありません。', fr: 'Vous n’avez pas de clé de lecture.' }],
      ['#add-kobo', { de: 'Seine Adresse erstellen', ja: 'アドレスを作成', fr: 'Créer son adresse' }],
    ],
    english: ['No device yet', 'Add a KOReader device', 'Add a Kobo', 'You have no reader key.', 'Make a reader key', 'Catalog address'],
  },
  {
    path: '/profile',
    ready: ['.session-current', '#ereader-title'],
    title: { de: 'Profil', ja: 'プロフィール', fr: 'Profil' },
    shows: [
      ['.session[data-current] .session-current', { de: ' (dieser Browser)', ja: ' （このブラウザー）', fr: ' (ce navigateur)' }],
      ['#ereader-title', { de: 'E-Reader', ja: '電子書籍リーダー', fr: 'Liseuse' }],
      ['#ereader-save', { de: 'Adresse speichern', ja: 'アドレスを保存', fr: 'Enregistrer l’adresse' }],
      [
        '#sends-none',
        {
          de: 'Noch kein Buch gesendet: Nutzen Sie „Senden“ auf der Seite eines Buchs.',
          ja: 'まだ本を送っていません。本のページの「送信」を使ってください。',
          fr: 'Aucun livre envoyé pour l’instant : utilisez Envoyer sur la page d’un livre.',
        },
      ],
    ],
    english: ['(this browser)', 'Signed in ', 'last used', 'Save the address', 'No book sent yet'],
  },
  {
    path: '/offline',
    title: { de: 'Offline-Bücher', ja: 'オフラインの本', fr: 'Livres hors ligne' },
    shows: [
      ['h1', { de: 'Offline-Bücher', ja: 'オフラインの本', fr: 'Livres hors ligne' }],
      [
        '#offline-empty',
        {
          de: 'In diesem Browser ist kein Buch aufbewahrt. Nutzen Sie „Offline behalten“ auf der Seite eines Buchs.',
          ja: 'このブラウザーに保存した本はありません。本のページで「オフラインで保存」を使ってください。',
          fr: 'Aucun livre n’est gardé dans ce navigateur. Utilisez « Garder hors ligne » sur la page d’un livre.',
        },
      ],
    ],
    english: ['Offline books', 'Books kept in this browser'],
  },
];

/** The sessions list's label, an attribute (not in the page's text). */
const SESSIONS_LABEL: Record<Lang, string> = { de: 'Sitzungen', ja: 'セッション', fr: 'Sessions' };

if (!HAS_CHROMIUM) describe.skip(`admin pages in the reader's language (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

for (const mode of PAGE_MODES) {
  describe.skipIf(!HAS_CHROMIUM)(`admin, devices, sessions and mail pages in the reader's language (${mode})`, () => {
    let browser: Browser;
    let smtp: MailServer;
    let b: Bindery;
    let call: Call;
    let admin: Account;
    beforeAll(async () => {
      smtp = await startMailServer();
      [b, browser] = await Promise.all([startBindery(mode, smtp.env), launch()]);
      call = api(b);
      admin = await register(call, { name: uniq('chief') });
      // a library scanned once: the libraries and scanner pages have a row each
      const dir = emptyDir();
      copyFileSync(join(FIXTURE, 'J. R. Hartley/The Hidden Crown (1864).epub'), join(dir, 'crown.epub'));
      const lib = await createLibrary(call, admin.token, { name: 'Sprachen', folders: [dir], watch: false });
      await scan(call, admin.token, lib.id);
    }, 240_000);
    afterAll(async () => {
      await browser?.close();
      await b?.stop();
      await smtp?.stop();
    });

    /** Every page as `who` sees it in `lang`: `lang` on <html>, the words, no English ones, axe clean. */
    async function visitAll(who: Account, lang: Lang, acceptLanguage: string): Promise<void> {
      const t = await openAs(browser, b.url, who.token);
      await t.ctx.setExtraHTTPHeaders({ 'accept-language': acceptLanguage });
      try {
        for (const p of PAGES) {
          const r = await t.page.goto(`${b.url}${p.path}`);
          expect(r?.status(), p.path).toBe(200);
          expect(r?.headers()['content-language'], p.path).toBe(lang);
          for (const selector of p.ready ?? []) await t.page.waitForSelector(selector);
          expect(await t.page.getAttribute('html', 'lang'), p.path).toBe(lang);
          expect(await t.page.title(), p.path).toBe(`${p.title[lang]} · Bindery`);
          for (const [selector, text] of p.shows) expect((await t.page.textContent(selector))?.trim(), `${p.path} ${selector}`).toBe(text[lang].trim());
          const words = await pageText(t.page);
          for (const english of p.english) expect(words, `${p.path} still says “${english}”`).not.toContain(english);
          if (p.path === '/profile') expect(await t.page.getAttribute('ul.sessions', 'aria-label')).toBe(SESSIONS_LABEL[lang]);
          expect(await axeProblems(t.page), p.path).toEqual([]);
        }
        expect(t.errors).toEqual([]);
        expect(t.dialogs).toEqual([]);
      } finally {
        await t.ctx.close();
      }
    }

    it('a German administrator by their browser’s Accept-Language', async () => {
      await visitAll(admin, 'de', 'de-DE,de;q=0.9,en;q=0.5');
    });

    it('a Japanese administrator by their profile, over an English browser', async () => {
      const ja = await register(call, { name: uniq('kanri'), role: 'admin', caller: admin.token });
      expect((await call('PUT', '/api/auth/profile', { token: ja.token, body: { language: 'ja' } })).status).toBe(200);
      await visitAll(ja, 'ja', 'en-US,en;q=0.9');
    });

    it('a French administrator by their profile, over a German browser (the profile wins)', async () => {
      const fr = await register(call, { name: uniq('admin-fr'), role: 'admin', caller: admin.token });
      expect((await call('PUT', '/api/auth/profile', { token: fr.token, body: { language: 'fr' } })).status).toBe(200);
      await visitAll(fr, 'fr', 'de-DE,de;q=0.9');
    });

    it('an English browser with no choice still gets the English words, word for word', async () => {
      const t = await openAs(browser, b.url, admin.token);
      try {
        await t.page.goto(`${b.url}/devices`);
        expect(await t.page.getAttribute('html', 'lang')).toBe('en');
        expect(await t.page.textContent('#no-devices')).toBe('No device yet. Add one with the steps below.');
        await t.page.goto(`${b.url}/admin/scanner`);
        expect(await t.page.textContent('#scan-states .scan-state')).toBe('Idle');
        // the latest scan: the one the library's creation started, or the one asked for after it
        expect(await t.page.textContent('#scan-states .scan-counts')).toMatch(/^1 files seen, [01] added, 0 updated, 0 moved, 0 removed, 0 unreadable$/);
      } finally {
        await t.ctx.close();
      }
    });
  });
}

/** What the page shows as text (not its attributes). */
const pageText = (page: Page) => page.evaluate(() => document.body.textContent ?? '');
