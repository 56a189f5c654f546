import type { Ajv } from 'ajv';
import { fullFormats } from 'ajv-formats/dist/formats.js';

// PostgreSQL's timestamptz has no year 0 (ISO 8601's 0000 is 1 BC) and takes UTC offsets below
// 16 hours; RFC 3339, which ajv-formats checks, allows both. Such a value passed validation and
// failed in SQL with a 500 (SQLSTATE 22008 and 22009).
const MAX_OFFSET_HOURS = 15;

function storable(text: string): boolean {
  if (/^0000/.test(text)) return false;
  const offset = /([+-])(\d{2}):?(\d{2})$/.exec(text);
  return !offset || Number(offset[2]) <= MAX_OFFSET_HOURS;
}

type Validator = { validate: (text: string) => boolean };
const validateDateTime = (fullFormats['date-time'] as Validator).validate;
const validateDate = (fullFormats.date as Validator).validate;

/**
 * Replaces ajv-formats' `date-time` and `date` with the same checks narrowed to what PostgreSQL
 * stores, so that a request's timestamp is either refused with a 400 or stored.
 */
export function addStorableDateFormats(ajv: Ajv): void {
  ajv.addFormat('date-time', { type: 'string', validate: (text: string) => validateDateTime(text) && storable(text) });
  ajv.addFormat('date', { type: 'string', validate: (text: string) => validateDate(text) && storable(text) });
}
