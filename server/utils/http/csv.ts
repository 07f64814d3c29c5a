// The one CSV writer of the app: RFC 4180 (fields quoted when they hold a comma, a quote or a line
// break, quotes doubled, CRLF line ends), and safe to open in a spreadsheet: a text that begins
// with =, +, -, @, a tab or a carriage return would be run as a formula (CSV injection), so it is
// written with a leading ' instead, whoever wrote the value (a caller's user agent, a task's title).
// Every export goes through it, a line at a time, so exports stream.

const formulaStart = /^[=+\-@\t\r]/
const needsQuotes = /[",\r\n]/

/**
 * One field: nothing for null, a Date as ISO text, an object as JSON, a number or boolean as
 * written; a text that could start a formula gets a leading '.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return ''
  let text: string
  if (typeof value === 'string') text = formulaStart.test(value) ? `'${value}` : value
  // a number (a negative one included) is a value to a spreadsheet, not a formula
  else if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') text = String(value)
  else if (value instanceof Date) text = value.toISOString()
  else text = JSON.stringify(value)
  return needsQuotes.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** One line: the fields in order, with its CRLF. */
export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvField).join(',')}\r\n`
}

/** The lines of rows under a header line of `columns`: what an export streams, a batch at a time. */
export function csvRows<Row extends object>(columns: readonly (keyof Row & string)[], rows: readonly Row[]): string {
  let text = ''
  for (const row of rows) text += csvLine(columns.map(column => row[column]))
  return text
}

/** The header line of `columns`. */
export function csvHeader(columns: readonly string[]): string {
  return csvLine(columns)
}
