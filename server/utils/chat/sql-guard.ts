/** What the guard decided about a model-written statement. */
export type SqlVerdict
  = | { ok: true, sql: string }
    | { ok: false, reason: string }

// Functions a read query may call: aggregates, window functions, text, numbers, dates, json and
// arrays. Anything else (set_config, pg_sleep, pg_read_file, dblink, lo_*, query_to_xml,
// current_setting, nextval, advisory locks, ...) is refused by its absence.
const allowedFunctions = new Set([
  // aggregates
  'count', 'sum', 'avg', 'min', 'max', 'every', 'bool_and', 'bool_or', 'string_agg', 'array_agg',
  'json_agg', 'jsonb_agg', 'json_object_agg', 'jsonb_object_agg', 'percentile_cont', 'percentile_disc',
  'mode', 'stddev', 'stddev_pop', 'stddev_samp', 'variance', 'var_pop', 'var_samp', 'corr',
  // window functions
  'row_number', 'rank', 'dense_rank', 'percent_rank', 'cume_dist', 'ntile', 'lag', 'lead',
  'first_value', 'last_value', 'nth_value',
  // text
  'lower', 'upper', 'initcap', 'length', 'char_length', 'character_length', 'octet_length',
  'substring', 'substr', 'btrim', 'ltrim', 'rtrim', 'trim', 'concat', 'concat_ws', 'replace',
  'left', 'right', 'position', 'strpos', 'split_part', 'lpad', 'rpad', 'starts_with', 'reverse',
  'repeat', 'overlay', 'format', 'regexp_replace', 'regexp_match', 'regexp_matches', 'regexp_like',
  'regexp_count', 'regexp_substr', 'similar_to_escape', 'like_escape', 'md5', 'translate',
  'string_to_array', 'array_to_string', 'to_char', 'to_number', 'quote_literal', 'normalize',
  // numbers
  'abs', 'round', 'floor', 'ceil', 'ceiling', 'trunc', 'mod', 'power', 'sqrt', 'sign', 'greatest',
  'least', 'div', 'exp', 'ln', 'log', 'width_bucket',
  // dates and times
  'now', 'date_trunc', 'date_part', 'extract', 'age', 'make_date', 'make_time', 'make_timestamp',
  'make_timestamptz', 'make_interval', 'to_date', 'to_timestamp', 'date_bin', 'justify_days',
  'justify_hours', 'justify_interval', 'timezone', 'isfinite', 'overlaps', 'current_date',
  'statement_timestamp', 'transaction_timestamp', 'clock_timestamp',
  // json and arrays
  'json_build_object', 'jsonb_build_object', 'json_build_array', 'jsonb_build_array', 'to_json',
  'to_jsonb', 'json_array_length', 'jsonb_array_length', 'jsonb_array_elements',
  'jsonb_array_elements_text', 'json_array_elements', 'json_array_elements_text', 'jsonb_each',
  'jsonb_each_text', 'jsonb_object_keys', 'jsonb_typeof', 'json_typeof', 'jsonb_extract_path',
  'jsonb_extract_path_text', 'jsonb_pretty', 'jsonb_strip_nulls', 'array_length', 'cardinality',
  'unnest', 'array_position', 'array_positions', 'array_remove', 'array_append', 'array_cat',
  'array_prepend', 'generate_series', 'coalesce', 'nullif',
])

// SQL value keywords that need no function call: dates and times only (not current_user & co).
const allowedValueFunctions = new Set([
  'SVFOP_CURRENT_DATE', 'SVFOP_CURRENT_TIME', 'SVFOP_CURRENT_TIME_N', 'SVFOP_CURRENT_TIMESTAMP',
  'SVFOP_CURRENT_TIMESTAMP_N', 'SVFOP_LOCALTIME', 'SVFOP_LOCALTIME_N', 'SVFOP_LOCALTIMESTAMP',
  'SVFOP_LOCALTIMESTAMP_N',
])

// Nodes that never belong in a read of the team's rows: locking, INTO, parameters, XML and
// JSON table functions, TABLESAMPLE (its method is a function), and every other statement kind.
const refusedNodes: Record<string, string> = {
  intoClause: 'SELECT INTO creates a table; only plain SELECT is allowed',
  IntoClause: 'SELECT INTO creates a table; only plain SELECT is allowed',
  lockingClause: 'locking clauses (FOR UPDATE, FOR SHARE, ...) are not allowed',
  LockingClause: 'locking clauses (FOR UPDATE, FOR SHARE, ...) are not allowed',
  ParamRef: 'parameters ($1) are not allowed',
  RangeTableFunc: 'XMLTABLE is not allowed',
  JsonTable: 'JSON_TABLE is not allowed',
  RangeTableSample: 'TABLESAMPLE is not allowed',
  XmlExpr: 'XML functions are not allowed',
  XmlSerialize: 'XML functions are not allowed',
  CurrentOfExpr: 'WHERE CURRENT OF is not allowed',
  CollateClause: 'COLLATE is not allowed',
}

type Node = Record<string, unknown>

interface Scope {
  tables: ReadonlySet<string>
  ctes: ReadonlySet<string>
}

class Refusal extends Error {}

/** Why a statement with a NUL character is refused (by the guard and by the database layer). */
export const nulReason = 'the statement contains a NUL character (\\u0000), which PostgreSQL cannot take; remove it'

const stringValue = (node: unknown): string | undefined => ((node as Node | undefined)?.String as { sval?: string } | undefined)?.sval

/** Names as the parser lists them (`funcname`, `names`): ['pg_catalog', 'substring'] or ['count']. */
function nameParts(list: unknown): string[] {
  return Array.isArray(list) ? list.map(stringValue).filter((part): part is string => part !== undefined) : []
}

function checkFunction(node: Node) {
  const parts = nameParts(node.funcname)
  const name = parts.at(-1) ?? ''
  const schema = parts.length > 1 ? parts[0]! : 'pg_catalog'
  if (parts.length > 2 || schema !== 'pg_catalog' || !allowedFunctions.has(name)) {
    throw new Refusal(`the function ${parts.join('.') || '(unknown)'} is not allowed`)
  }
}

function checkTypeName(node: Node) {
  const parts = nameParts(node.names)
  const name = parts.at(-1)?.toLowerCase() ?? ''
  if (parts.length > 1 && parts[0]!.toLowerCase() !== 'pg_catalog') throw new Refusal(`the type ${parts.join('.')} is not allowed`)
  // reg* types look objects up in the catalog
  if (name.startsWith('reg')) throw new Refusal(`casts to ${name} are not allowed`)
}

function checkOperator(node: Node) {
  const parts = nameParts(node.name)
  if (parts.length > 1 && parts[0]!.toLowerCase() !== 'pg_catalog') throw new Refusal(`the operator ${parts.join('.')} is not allowed`)
}

function checkRelation(node: Node, scope: Scope) {
  // the parser has already folded unquoted names to lower case
  const schema = node.schemaname as string | undefined
  const name = node.relname as string
  if (!schema && scope.ctes.has(name)) return
  if ((schema && schema !== 'public') || !scope.tables.has(name)) {
    throw new Refusal(`the table ${schema ? `${schema}.` : ''}${name} is not available; tables you can query: ${[...scope.tables].sort().join(', ')}`)
  }
  if (node.inh === false) throw new Refusal('ONLY is not allowed')
}

type WithClause = { recursive?: boolean, ctes?: { CommonTableExpr?: { ctename?: string } }[] }

const withCtes = (scope: Scope, names: (string | undefined)[]): Scope =>
  ({ tables: scope.tables, ctes: new Set([...scope.ctes, ...names.filter((name): name is string => !!name)]) })

/**
 * A SELECT with its WITH clause, each name resolved as Postgres does: a CTE's body sees the CTEs
 * listed before it (all of them under WITH RECURSIVE), never itself otherwise, so that
 * `with activity_log as (select * from activity_log)` reads the table and is checked as one;
 * the rest of the statement sees every CTE of the clause.
 */
function walkSelect(select: Node, scope: Scope) {
  const { withClause, ...rest } = select as Node & { withClause?: WithClause }
  let inner = scope
  if (withClause?.ctes?.length) {
    const ctes = withClause.ctes
    if (withClause.recursive) inner = withCtes(scope, ctes.map(cte => cte.CommonTableExpr?.ctename))
    for (const cte of ctes) {
      walk(cte, inner)
      if (!withClause.recursive) inner = withCtes(inner, [cte.CommonTableExpr?.ctename])
    }
  }
  walk(rest, inner)
}

function walk(value: unknown, scope: Scope): void {
  if (Array.isArray(value)) {
    for (const item of value) walk(item, scope)
    return
  }
  if (value === null || typeof value !== 'object') return
  for (const [key, child] of Object.entries(value as Node)) {
    if (key in refusedNodes) throw new Refusal(refusedNodes[key]!)
    if (key.endsWith('Stmt') && key !== 'SelectStmt') throw new Refusal(`only SELECT is allowed, not ${key.replace(/Stmt$/, '').toUpperCase()}`)
    const node = child as Node
    switch (key) {
      case 'SelectStmt':
        walkSelect(node, scope)
        continue
      case 'RangeVar':
        checkRelation(node, scope)
        break
      case 'FuncCall':
        checkFunction(node)
        break
      case 'TypeName':
      case 'typeName':
        checkTypeName(node)
        break
      case 'A_Expr':
        checkOperator(node)
        break
      case 'SQLValueFunction':
        if (!allowedValueFunctions.has(node.op as string)) throw new Refusal(`${String(node.op).replace('SVFOP_', '')} is not allowed`)
        break
    }
    walk(child, scope)
  }
}

/**
 * Decides whether a model-written statement may run: exactly one SELECT (no INTO, no locking
 * clause, no data-modifying CTE), reading only `tables` (or its own CTEs), calling only allowed
 * functions. Returns the single statement's text without its trailing semicolon.
 */
export async function checkChatSql(sql: string, tables: ReadonlySet<string>): Promise<SqlVerdict> {
  // the parser reads C strings and the wire protocol ends a statement at a NUL: neither can take one
  if (sql.includes('\u0000')) return { ok: false, reason: nulReason }
  let tree: { stmts?: { stmt?: Node, stmt_location?: number, stmt_len?: number }[] }
  // the parser (WebAssembly) is imported with the first statement, not at start-up
  const { parse } = await import('libpg-query')
  try {
    tree = await parse(sql)
  }
  catch (error) {
    return { ok: false, reason: `the statement does not parse: ${(error as Error).message}` }
  }
  const statements = tree.stmts ?? []
  if (statements.length !== 1) return { ok: false, reason: statements.length ? 'send exactly one statement' : 'the statement is empty' }
  const [statement] = statements
  const root = statement!.stmt ?? {}
  if (!('SelectStmt' in root)) return { ok: false, reason: `only SELECT is allowed, not ${Object.keys(root)[0]?.replace(/Stmt$/, '').toUpperCase() ?? 'this'}` }
  try {
    walk(root, { tables, ctes: new Set() })
  }
  catch (error) {
    if (error instanceof Refusal) return { ok: false, reason: error.message }
    throw error
  }
  // libpg-query counts bytes; the statement is cut out of the UTF-8 text
  const bytes = Buffer.from(sql, 'utf8')
  const start = statement!.stmt_location ?? 0
  const text = bytes.subarray(start, statement!.stmt_len ? start + statement!.stmt_len : bytes.length).toString('utf8')
  return { ok: true, sql: text.trim().replace(/;\s*$/, '') }
}
