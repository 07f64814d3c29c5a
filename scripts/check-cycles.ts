// Fails when the server's modules import each other in a circle (type-only imports included), so
// that every module's dependencies form a tree a reader can follow. Run by `npm run lint`.
// Usage: tsx scripts/check-cycles.ts [folder ...]   (default: server)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '..')
const folders = process.argv.slice(2).length ? process.argv.slice(2) : ['server']

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return /\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts') ? [path] : []
  })
}

// `import … from './x'`, `export … from '../y'`, `import './z'`, `import('./w')`
const specifierPattern = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g

function resolveImport(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier)
  const candidates = [base, `${base}.ts`, `${base}.mts`, `${base}.js`, `${base}.mjs`, join(base, 'index.ts')]
  return candidates.find(path => existsSync(path) && statSync(path).isFile())
}

const files = folders.flatMap(folder => sourceFiles(resolve(root, folder)))
const edges = new Map<string, string[]>()
for (const file of files) {
  const text = readFileSync(file, 'utf8')
  const targets = [...text.matchAll(specifierPattern)]
    .map(match => resolveImport(file, match[1]!))
    .filter((target): target is string => target !== undefined)
  edges.set(file, [...new Set(targets)])
}

// Tarjan's strongly connected components: every component of more than one module is a cycle.
let index = 0
const indexOf = new Map<string, number>()
const lowOf = new Map<string, number>()
const stack: string[] = []
const onStack = new Set<string>()
const cycles: string[][] = []

function visit(node: string) {
  indexOf.set(node, index)
  lowOf.set(node, index)
  index++
  stack.push(node)
  onStack.add(node)
  for (const next of edges.get(node) ?? []) {
    if (!indexOf.has(next)) {
      visit(next)
      lowOf.set(node, Math.min(lowOf.get(node)!, lowOf.get(next)!))
    }
    else if (onStack.has(next)) {
      lowOf.set(node, Math.min(lowOf.get(node)!, indexOf.get(next)!))
    }
  }
  if (lowOf.get(node) === indexOf.get(node)) {
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1 || (edges.get(node) ?? []).includes(node)) cycles.push(component)
  }
}

for (const file of edges.keys()) if (!indexOf.has(file)) visit(file)

if (cycles.length) {
  console.error(`Import cycles (${cycles.length}): each group below imports itself through the others.`)
  for (const cycle of cycles) {
    const members = new Set(cycle)
    console.error(`\n  ${cycle.map(file => relative(root, file)).sort().join('\n  ')}`)
    for (const file of cycle) {
      for (const next of edges.get(file) ?? []) {
        if (members.has(next)) console.error(`    ${relative(root, file)} -> ${relative(root, next)}`)
      }
    }
  }
  process.exit(1)
}
console.log(`No import cycle among ${files.length} modules under ${folders.join(', ')}.`)
