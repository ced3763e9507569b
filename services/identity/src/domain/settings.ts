// The typed settings registry and raw configuration rules.
import { isAbsolute } from 'node:path';
import { err, fail, ok, type Identity, type Result } from '@bindery/contracts';
import { invalidRequest, validation } from './validate';

type Value = string | number | boolean;
type Def = Omit<Identity.SettingEntry, 'key' | 'value' | 'is_default'>;

export const SETTINGS = {
  scan_poll_interval_seconds: {
    type: 'integer',
    default: 60,
    min: 1,
    max: 3600,
    requires_restart: false,
    category: 'scanner',
    group: 'Library scanning',
    description: 'Seconds between polls of library folders where file events are not delivered (network mounts).',
  },
  scan_on_startup: {
    type: 'boolean',
    default: true,
    min: null,
    max: null,
    requires_restart: false,
    category: 'scanner',
    group: 'Library scanning',
    description: 'Scan every library when the server starts.',
  },
  registration_enabled: {
    type: 'boolean',
    // off: anyone who reaches the server could otherwise make an account and read every library
    default: false,
    min: null,
    max: null,
    requires_restart: false,
    category: 'security',
    group: 'Registration',
    description: 'Let anyone create an account. The first account can always be created; admins can always add users.',
  },
  session_duration_seconds: {
    type: 'integer',
    default: 604800,
    min: 300,
    max: 31536000,
    requires_restart: false,
    category: 'security',
    group: 'Sessions',
    description: 'Lifetime of a session token and of its refresh token, in seconds.',
  },
  login_max_attempts: {
    type: 'integer',
    default: 5,
    min: 1,
    max: 100,
    requires_restart: false,
    category: 'security',
    group: 'Login protection',
    description: 'Failed logins for one login name before it is locked.',
  },
  login_lock_minutes: {
    type: 'integer',
    default: 15,
    min: 1,
    max: 1440,
    requires_restart: false,
    category: 'security',
    group: 'Login protection',
    description: 'How long a login name stays locked, and the window in which failures count.',
  },
  new_users_see_all_libraries: {
    type: 'boolean',
    default: true,
    min: null,
    max: null,
    requires_restart: false,
    category: 'security',
    group: 'Library access',
    description: 'A new account sees every library (on) or none until an admin grants some (off). Admins always see every library.',
  },
  kobo_store_proxy: {
    type: 'boolean',
    // off: a Kobo talks to this server only
    default: false,
    min: null,
    max: null,
    requires_restart: false,
    category: 'sync',
    group: 'Kobo',
    description:
      "Pass the Kobo store calls Bindery does not answer itself (the shop, wishlists, recommendations) on to Kobo's store (KOBO_STORE_URL). Off: they are answered empty.",
  },
  backup_folder: {
    type: 'string',
    // empty: no scheduled backup
    default: '',
    min: null,
    max: null,
    requires_restart: false,
    category: 'general',
    group: 'Backups',
    description: 'The folder (an absolute path on the server) where a backup is written every backup_interval_hours, keeping the newest backup_keep. Empty: no scheduled backups.',
  },
  backup_interval_hours: {
    type: 'integer',
    default: 24,
    min: 1,
    max: 8760,
    requires_restart: false,
    category: 'general',
    group: 'Backups',
    description: 'Hours between scheduled backups.',
  },
  backup_keep: {
    type: 'integer',
    default: 7,
    min: 1,
    max: 1000,
    requires_restart: false,
    category: 'general',
    group: 'Backups',
    description: 'How many scheduled backups the folder keeps; older ones are removed.',
  },
} as const satisfies Record<string, Def>;

export type SettingKey = keyof typeof SETTINGS;
export type Settings = {
  [K in SettingKey]: (typeof SETTINGS)[K]['default'] extends boolean ? boolean : (typeof SETTINGS)[K]['default'] extends string ? string : number;
};

export const isSettingKey = (k: string): k is SettingKey => Object.hasOwn(SETTINGS, k);

/** Defaults the deployment sets in place of the registry's (an operator's choice at start; a stored value wins). */
export type SettingDefaults = Partial<Record<SettingKey, Value>>;

const defaultOf = (key: string, d: Def, defaults: SettingDefaults): Value => (key in defaults ? defaults[key as SettingKey]! : d.default);

export function resolveSettings(stored: Record<string, Value>, defaults: SettingDefaults = {}): Settings {
  const out: Record<string, Value> = {};
  for (const [k, d] of Object.entries(SETTINGS)) out[k] = k in stored ? stored[k]! : defaultOf(k, d, defaults);
  return out as Settings;
}

export function settingEntries(stored: Record<string, Value>, defaults: SettingDefaults = {}): Identity.SettingEntry[] {
  return Object.entries(SETTINGS).map(([key, d]) => {
    const dflt = defaultOf(key, d, defaults);
    const value = key in stored ? stored[key]! : dflt;
    return { key, value, ...d, default: dflt, is_default: value === dflt };
  });
}

/** Validates a whole PUT by type, min and max; nothing is applied unless every entry passes. */
export function parseSettingsPut(raw: Record<string, unknown>): Result<Record<string, Value>> {
  const body =
    raw.settings !== undefined && typeof raw.settings === 'object' && raw.settings !== null && !Array.isArray(raw.settings) ? (raw.settings as Record<string, unknown>) : raw;
  const keys = Object.keys(body);
  if (keys.length === 0) return err(validation('no settings given'));
  const out: Record<string, Value> = {};
  for (const key of keys) {
    if (!isSettingKey(key)) return err(validation(`unknown setting: ${key}`));
    const d: Def = SETTINGS[key];
    let v = body[key];
    if (d.type === 'integer') {
      if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) v = Number(v.trim());
      if (typeof v !== 'number' || !Number.isInteger(v)) return err(validation(`${key} must be an integer`));
      if ((d.min !== null && v < d.min) || (d.max !== null && v > d.max)) return err(validation(`${key} must be between ${d.min} and ${d.max}`));
    } else if (d.type === 'boolean') {
      if (v === 'true') v = true;
      else if (v === 'false') v = false;
      if (typeof v !== 'boolean') return err(validation(`${key} must be true or false`));
    } else if (typeof v !== 'string') return err(validation(`${key} must be a string`));
    else {
      v = v.trim();
      const text = v as string;
      if (text.length > SETTING_TEXT_MAX) return err(validation(`${key} must be at most ${SETTING_TEXT_MAX} characters`));
      if (/[\u0000-\u001f\u007f]/.test(text) || /[\ud800-\udfff]/.test(text.replace(/[\ud800-\udbff][\udc00-\udfff]/g, '')))
        return err(validation(`${key} must not contain control characters`));
      if (key === 'backup_folder' && text !== '' && !isAbsolute(text)) return err(validation('backup_folder must be an absolute path, or empty'));
    }
    out[key] = v as Value;
  }
  return ok(out);
}

/** the longest text a string setting takes */
export const SETTING_TEXT_MAX = 4096;

const CONFIG_KEY = /^[a-z][a-z0-9_.-]{0,63}$/;
export const CONFIG_VALUE_MAX = 4096;

/** Raw key/value configuration: string values, null removes a key; registry keys belong to settings. */
export function parseConfigPut(raw: Record<string, unknown>): Result<Record<string, string | null>> {
  const body = raw.config !== undefined && typeof raw.config === 'object' && raw.config !== null && !Array.isArray(raw.config) ? (raw.config as Record<string, unknown>) : raw;
  const keys = Object.keys(body);
  if (keys.length === 0) return err(validation('no configuration given'));
  if (keys.length > 100) return err(validation('at most 100 keys per request'));
  const out: Record<string, string | null> = {};
  for (const key of keys) {
    if (!CONFIG_KEY.test(key)) return err(validation(`invalid config key: ${key.slice(0, 64)}`));
    if (isSettingKey(key)) return err(fail('validation', `${key} is a typed setting: use /api/system/settings`));
    const v = body[key];
    if (v === null) out[key] = null;
    else if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') {
      const s = String(v);
      if (s.length > CONFIG_VALUE_MAX) return err(validation(`${key} must be at most ${CONFIG_VALUE_MAX} characters`));
      out[key] = s;
    } else return err(invalidRequest());
  }
  return ok(out);
}
