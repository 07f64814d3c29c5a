/** A value as compared: numbers (also numeric strings, as node-postgres returns bigint and numeric) rounded, text trimmed. */
function normalize(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'number' || typeof value === 'bigint' || (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim()))) {
    return `n:${Math.round(Number(value) * 1e6) / 1e6}`
  }
  if (typeof value === 'boolean') return `b:${value}`
  return `s:${String(value).trim()}`
}

const sortedKey = (values: string[]) => JSON.stringify([...values].sort())

/**
 * Whether a query result answers with the expected rows: the same number of rows, and for each
 * expected column a distinct column of the result with the same values, such that the rows match
 * as a multiset. Row order, column names and extra columns do not matter.
 */
export function resultMatches(expected: unknown[][], actual: unknown[][]): boolean {
  if (expected.length !== actual.length) return false
  if (!expected.length) return true
  const width = expected[0]!.length
  const actualWidth = actual[0]?.length ?? 0
  const expectedColumns = Array.from({ length: width }, (_, j) => expected.map(row => normalize(row[j])))
  const actualColumns = Array.from({ length: actualWidth }, (_, j) => actual.map(row => normalize(row[j])))
  const expectedRows = sortedKey(expected.map(row => JSON.stringify(row.map(normalize))))
  // try every assignment of expected columns to actual columns with the same values (few columns)
  const search = (j: number, chosen: number[]): boolean => {
    if (j === width) return sortedKey(actual.map(row => JSON.stringify(chosen.map(k => normalize(row[k]))))) === expectedRows
    const wanted = sortedKey(expectedColumns[j]!)
    for (let k = 0; k < actualWidth; k++) {
      if (!chosen.includes(k) && sortedKey(actualColumns[k]!) === wanted && search(j + 1, [...chosen, k])) return true
    }
    return false
  }
  return search(0, [])
}
