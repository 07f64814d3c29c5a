// npm run bench:revocation — how soon another app instance refuses a revoked key. Two app processes
// on one fresh Postgres database; 100 times: a key is made and used on both (so both hold it in
// memory), revoked through the first process's session route, and the second is asked with the
// key back to back until it answers 401. Prints p50, p99 and the worst of the time from the
// revocation's answer to the second process's first 401, and how many requests it still served.
//
// Needs a built app (`npm run build`; APP_BUILD_DIR is honoured) and a Postgres server:
// BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres.
// BENCH_REVOCATIONS (default 100) sets the count.
import { randomBytes } from 'node:crypto'
import { loadavg } from 'node:os'
import { benchDatabase } from './harness/bench-database'
import { startApp, type TestApp } from './harness/app'

const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const revocations = Number(process.env.BENCH_REVOCATIONS ?? 100)

// rate limiting stays on (every request is counted) with a limit the benchmark never reaches
const appEnv = { API_RATE_LIMIT: '1000000000' }

async function main() {
  const { databaseUrl, drop } = await benchDatabase(serverUrl)
  const apps: TestApp[] = []
  try {
    // the first applies the migrations; the second starts on the migrated database
    const first = await startApp(appEnv, { databaseUrl })
    apps.push(first)
    const second = await startApp(appEnv, { databaseUrl })
    apps.push(second)

    const signUp = await fetch(`${first.url}/api/auth/signup`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `bench-${randomBytes(4).toString('hex')}@example.com`, password: 'correct horse battery', name: 'Rita Revoker' }),
    })
    if (signUp.status !== 201) throw new Error(`sign-up answered ${signUp.status}`)
    const cookie = signUp.headers.getSetCookie().map(value => value.split(';')[0]).join('; ')
    const session = (method: string, path: string, body?: unknown) => fetch(`${first.url}${path}`, {
      method, headers: { cookie, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    })
    const team = await (await session('POST', '/api/teams', { name: 'Revocations' })).json() as { id: string }
    const asKey = async (base: string, key: string) => {
      const response = await fetch(`${base}/api/v1/tasks?limit=1`, { headers: { authorization: `Bearer ${key}` } })
      await response.arrayBuffer()
      return response.status
    }

    const load0 = loadavg()
    const latencies: number[] = []
    let servedAfter = 0
    for (let i = 0; i < revocations; i++) {
      const created = await (await session('POST', `/api/teams/${team.id}/api-keys`, { name: `Key ${i}` })).json() as { id: string, key: string }
      for (const base of [first.url, second.url]) {
        if (await asKey(base, created.key) !== 200) throw new Error('A new key was refused')
      }
      const revoked = await session('PATCH', `/api/teams/${team.id}/api-keys/${created.id}`)
      await revoked.arrayBuffer()
      const answeredAt = performance.now()
      if (revoked.status !== 200) throw new Error(`The revocation answered ${revoked.status}`)
      if (await asKey(first.url, created.key) !== 401) throw new Error('The revoking process served the revoked key')
      for (;;) {
        const status = await asKey(second.url, created.key)
        if (status === 401) break
        servedAfter++
        if (performance.now() - answeredAt > 10_000) throw new Error('The other process still serves the key after 10 s')
      }
      latencies.push(performance.now() - answeredAt)
    }
    latencies.sort((a, b) => a - b)
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!
    console.info(`Revocation seen by another process, ${revocations} revocations (from the revoking answer to the other's first 401, asked back to back):`)
    console.info(`  p50 ${at(0.5).toFixed(1)} ms   p99 ${at(0.99).toFixed(1)} ms   max ${latencies.at(-1)!.toFixed(1)} ms; the other process served the revoked key ${servedAfter} times in all`)
    console.info(`  the revoking process refused the very next request every time`)
    console.info(`load average before ${load0.map(l => l.toFixed(2)).join(' ')}, after ${loadavg().map(l => l.toFixed(2)).join(' ')} (2 cores)`)
  }
  finally {
    for (const app of apps) await app.stop()
    await drop()
  }
}

await main()
