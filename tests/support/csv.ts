/**
 * The rows of an RFC 4180 CSV text (CRLF line ends, fields quoted with doubled quotes); fails on
 * anything else. `postgrest`: PostgREST's form instead (LF between lines, none after the last).
 */
export function parseCsv(text: string, form: 'rfc4180' | 'postgrest' = 'rfc4180'): string[][] {
  if (form === 'postgrest') {
    if (text.endsWith('\n')) throw new Error('PostgREST ends its CSV without a line break')
    text = `${text}\n`
  }
  const lineEnd = form === 'postgrest' ? '\n' : '\r\n'
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let isQuoted = false
  let wasQuoted = false
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!
    if (isQuoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      }
      else if (char === '"') isQuoted = false
      else field += char
    }
    else if (char === '"') {
      if (field || wasQuoted) throw new Error(`A quote inside an unquoted field at ${i}`)
      isQuoted = true
      wasQuoted = true
    }
    else if (char === ',') {
      row.push(field)
      field = ''
      wasQuoted = false
    }
    else if (text.startsWith(lineEnd, i)) {
      row.push(field)
      rows.push(row)
      row = []
      field = ''
      wasQuoted = false
      i += lineEnd.length - 1
    }
    else if (char === '\r' || char === '\n') throw new Error(`A bare line break outside quotes at ${i}`)
    else {
      if (wasQuoted) throw new Error(`Text after a closing quote at ${i}`)
      field += char
    }
  }
  if (isQuoted) throw new Error('An unterminated quoted field')
  if (field || row.length) throw new Error('The last line has no line end')
  return rows
}

/** The rows of a CSV text as objects keyed by its header line. */
export function csvRecords(text: string, form: 'rfc4180' | 'postgrest' = 'rfc4180'): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text, form)
  if (!header) throw new Error('No header line')
  for (const row of rows) if (row.length !== header.length) throw new Error(`A row of ${row.length} fields under a header of ${header.length}`)
  return rows.map(row => Object.fromEntries(header.map((name, i) => [name, row[i]!])))
}

/** Whether a cell would be read as a formula by a spreadsheet (a leading =, +, -, @, tab or carriage return). */
export const isFormula = (cell: string) => /^[=+\-@\t\r]/.test(cell)
