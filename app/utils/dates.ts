// One absolute format for every date the app shows (fixed locale, so server and browser render alike).
const dateFormat = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium' })
const dateTimeFormat = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short' })

/** A calendar date, e.g. "22 Nov 2026". */
export function formatDate(value: string | Date): string {
  return dateFormat.format(new Date(value))
}

/** A date with its time of day, e.g. "22 Nov 2026, 14:05". */
export function formatDateTime(value: string | Date): string {
  return dateTimeFormat.format(new Date(value))
}
