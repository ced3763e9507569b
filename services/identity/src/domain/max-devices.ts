import { err, ok, type Result } from '@bindery/contracts';
import { invalidRequest, validation } from './validate';

export const MAX_DEVICES_MIN = 1;
export const MAX_DEVICES_MAX = 100;

/**
 * Bind then validate `max_devices`: a JSON integer, 1 to 100. A string (`"5"`) is the wrong JSON
 * type; the gateway turns a form's digits into a number before it calls.
 */
export function parseMaxDevices(raw: Record<string, unknown>): Result<number> {
  const v = raw.max_devices;
  if (v !== undefined && v !== null && typeof v !== 'number') return err(invalidRequest());
  if (v === undefined || v === null) return err(validation('max_devices is required'));
  if (!Number.isInteger(v) || v < MAX_DEVICES_MIN || v > MAX_DEVICES_MAX)
    return err(validation(`max_devices must be an integer between ${MAX_DEVICES_MIN} and ${MAX_DEVICES_MAX}`));
  return ok(v);
}
