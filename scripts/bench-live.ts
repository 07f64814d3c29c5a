// npm run bench:live — the change stream under load. Two app processes on one fresh Postgres
// database; BENCH_SUBSCRIBERS (default 500) subscribers, half Server-Sent Event streams
// (GET /api/v1/events/stream) and half realtime sockets (/realtime/v1/websocket, the Phoenix frames
// supabase-js sends), spread over both processes and over keys (10 per key: 5 streams, 5 sockets);
// then BENCH_RATE (default 100) task writes a second for BENCH_SECONDS (default 30) through the
// public API of both processes. Prints whether every event reached every subscriber, the time
// from the write in the database (the event's created_at, the trigger's clock just before the
// commit) to its arrival, p50 and p99, and the memory per idle subscriber (the processes' RSS
// before and after the subscribers opened). The baseline, in the same run, is bare Postgres:
// a LISTEN client's latency for a NOTIFY sent by an insert's trigger at the same rate.
//
// Needs a built app (`npm run build`; APP_BUILD_DIR is honoured) and a Postgres server:
// BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import pg from 'pg'
import WebSocket from 'ws'
import { benchDatabase } from './harness/bench-database'
import { startApp, type TestApp } from './harness/app'

const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const subscriberCount = Number(process.env.BENCH_SUBSCRIBERS ?? 500)
const rate = Number(process.env.BENCH_RATE ?? 100)
const seconds = Number(process.env.BENCH_SECONDS ?? 30)
const perKey = 10

function rssKiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find(l => l.startsWith('VmRSS:'))
  return Number(/\d+/.exec(line ?? '')?.[0] ?? 0)
}

/** What a subscriber saw: the titles of the tasks it was told of, and each arrival's delay. */
interface Subscriber {
  seen: Set<string>
  close(): void
}

const delays: number[] = []
const titlePattern = /"title":"(Write \d+)"/
const arrived = (createdAt: string) => delays.push(Date.now() - new Date(createdAt).getTime())

async function sseSubscriber(base: string, key: string): Promise<Subscriber> {
  const seen = new Set<string>()
  const controller = new AbortController()
  const response = await fetch(`${base}/api/v1/events/stream`, { headers: { authorization: `Bearer ${key}` }, signal: controller.signal })
  if (response.status !== 200) throw new Error(`a stream answered ${response.status}`)
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let resolveOpen: () => void = () => {}
  const opened = new Promise<void>(resolve => (resolveOpen = resolve))
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) return
        buffer += decoder.decode(value, { stream: true })
        let end: number
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          if (frame.includes(': connected')) resolveOpen()
          if (!frame.includes('\ndata: ')) continue
          // what is needed, without parsing the whole event (the client shares the machine with the apps)
          seen.add(titlePattern.exec(frame)?.[1] ?? '')
          arrived(/"created_at":"([^"]+)"/.exec(frame)![1]!)
        }
      }
    }
    catch {
      // closed
    }
  })()
  await opened
  return { seen, close: () => controller.abort() }
}

async function socketSubscriber(base: string, key: string): Promise<Subscriber> {
  const seen = new Set<string>()
  const socket = new WebSocket(`${base.replace('http', 'ws')}/realtime/v1/websocket?apikey=${key}&vsn=2.0.0`)
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  const joined = new Promise<void>((resolve, reject) => {
    socket.on('message', (raw) => {
      const text = String(raw)
      if (text.includes('"postgres_changes",{"ids"')) {
        seen.add(titlePattern.exec(text)?.[1] ?? '')
        arrived(/"commit_timestamp":"([^"]+)"/.exec(text)![1]!)
        return
      }
      const [, ref, , event, payload] = JSON.parse(text) as [string | null, string | null, string, string, { status?: string }]
      if (event === 'phx_reply' && ref === '1') {
        if (payload.status === 'ok') resolve()
        else reject(new Error(JSON.stringify(payload)))
      }
    })
  })
  socket.send(JSON.stringify(['1', '1', 'realtime:bench', 'phx_join', { config: { postgres_changes: [{ event: 'INSERT', schema: 'public', table: 'tasks' }] } }]))
  await joined
  const heartbeat = setInterval(() => socket.send(JSON.stringify([null, 'hb', 'phoenix', 'heartbeat', {}])), 25_000)
  return { seen, close: () => {
    clearInterval(heartbeat)
    socket.close()
  } }
}

/** Bare Postgres: an insert whose trigger notifies, and a LISTEN client, at the same rate. */
async function baseline(databaseUrl: string): Promise<number[]> {
  const setup = new pg.Client({ connectionString: databaseUrl })
  await setup.connect()
  await setup.query(`create table bench_baseline (id bigint generated always as identity, at timestamptz default clock_timestamp())`)
  await setup.query(`create function bench_baseline_notify() returns trigger language plpgsql as $$
    begin perform pg_notify('bench_baseline', new.at::text); return null; end $$`)
  await setup.query(`create trigger bench_baseline_notify after insert on bench_baseline for each row execute function bench_baseline_notify()`)
  const listener = new pg.Client({ connectionString: databaseUrl })
  await listener.connect()
  const bare: number[] = []
  listener.on('notification', message => bare.push(Date.now() - new Date(message.payload!).getTime()))
  await listener.query('listen bench_baseline')
  const writer = new pg.Pool({ connectionString: databaseUrl, max: 10 })
  const total = Math.min(rate * seconds, rate * 10)
  const started = Date.now()
  const writes: Promise<unknown>[] = []
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate
    if (due > Date.now()) await new Promise(r => setTimeout(r, due - Date.now()))
    writes.push(writer.query('insert into bench_baseline default values'))
  }
  await Promise.all(writes)
  const deadline = Date.now() + 5_000
  while (bare.length < total && Date.now() < deadline) await new Promise(r => setTimeout(r, 20))
  await writer.end()
  await listener.end()
  await setup.query('drop table bench_baseline; drop function bench_baseline_notify()')
  await setup.end()
  return bare
}

const percentile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN
}

// rate limiting stays on (every request is counted) with a limit the benchmark never reaches
const appEnv = { API_RATE_LIMIT: '1000000000' }

async function main() {
  const { databaseUrl, drop } = await benchDatabase(serverUrl)
  const processes: TestApp[] = []
  const subscribers: Subscriber[] = []
  try {
    const first = await startApp(appEnv, { databaseUrl })
    processes.push(first)
    const second = await startApp(appEnv, { databaseUrl })
    processes.push(second)
    const apps = [first.url, second.url]

    const signUp = await fetch(`${first.url}/api/auth/signup`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `bench-${randomBytes(4).toString('hex')}@example.com`, password: 'correct horse battery', name: 'Lia Live' }),
    })
    if (signUp.status !== 201) throw new Error(`sign-up answered ${signUp.status}`)
    const cookie = signUp.headers.getSetCookie().map(value => value.split(';')[0]).join('; ')
    const session = (method: string, path: string, body?: unknown) => fetch(`${first.url}${path}`, {
      method, headers: { cookie, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    })
    const team = await (await session('POST', '/api/teams', { name: 'Live' })).json() as { id: string }
    const keys: string[] = []
    for (let i = 0; i < Math.ceil(subscriberCount / perKey) + 1; i++) {
      keys.push((await (await session('POST', `/api/teams/${team.id}/api-keys`, { name: `Key ${i}` })).json() as { key: string }).key)
    }
    const writerKey = keys.pop()!

    const rssBefore = processes.map(app => rssKiB(app.pid))
    for (let i = 0; i < subscriberCount; i++) {
      const key = keys[Math.floor(i / perKey)]!
      const base = apps[i % 2]!
      subscribers.push(await (i % perKey < perKey / 2 ? sseSubscriber(base, key) : socketSubscriber(base, key)))
    }
    await new Promise(r => setTimeout(r, 2_000))
    const rssAfter = processes.map(app => rssKiB(app.pid))
    const perSubscriberKiB = (rssAfter.reduce((a, b) => a + b, 0) - rssBefore.reduce((a, b) => a + b, 0)) / subscriberCount

    const load0 = loadavg()
    const total = rate * seconds
    const titles: string[] = []
    const started = Date.now()
    const writes: Promise<void>[] = []
    let failed = 0
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / rate
      if (due > Date.now()) await new Promise(r => setTimeout(r, due - Date.now()))
      const title = `Write ${i}`
      titles.push(title)
      writes.push(fetch(`${apps[i % 2]}/api/v1/tasks`, {
        method: 'POST', headers: { 'authorization': `Bearer ${writerKey}`, 'content-type': 'application/json', 'prefer': 'return=minimal' },
        body: JSON.stringify({ title }),
      }).then(async (response) => {
        await response.arrayBuffer()
        if (response.status !== 201) failed++
      }))
    }
    await Promise.all(writes)
    const writeSeconds = (Date.now() - started) / 1000
    const deadline = Date.now() + 15_000
    const complete = () => subscribers.every(s => titles.every(t => s.seen.has(t)))
    while (!complete() && Date.now() < deadline) await new Promise(r => setTimeout(r, 100))
    const missing = subscribers.reduce((sum, s) => sum + titles.filter(t => !s.seen.has(t)).length, 0)

    const bare = await baseline(databaseUrl)
    const p50 = percentile(delays, 0.5)
    const p99 = percentile(delays, 0.99)
    const bareP50 = percentile(bare, 0.5)
    const bareP99 = percentile(bare, 0.99)
    console.info(`Change stream: 2 processes, ${subscriberCount} subscribers (${subscriberCount / 2} SSE streams, ${subscriberCount / 2} realtime sockets), ${total} writes at ${rate}/s over ${writeSeconds.toFixed(1)} s (${failed} failed)`)
    console.info(`  delivered: ${delays.length} of ${total * subscriberCount} (event, subscriber) pairs; missing ${missing}${missing ? '' : ': every event reached every subscriber'}`)
    console.info(`  write in the database to arrival: p50 ${p50.toFixed(1)} ms   p99 ${p99.toFixed(1)} ms   (targets 50 / 250 ms)`)
    console.info(`  bare Postgres NOTIFY to a LISTEN client at the same rate: p50 ${bareP50.toFixed(1)} ms   p99 ${bareP99.toFixed(1)} ms; ratio p50 ${(p50 / Math.max(bareP50, 0.1)).toFixed(1)}x, p99 ${(p99 / Math.max(bareP99, 0.1)).toFixed(1)}x`)
    console.info(`  memory per idle subscriber: ${perSubscriberKiB.toFixed(1)} KiB (RSS of both processes before and after they opened; goal 64 KiB)`)
    console.info(`load average before ${load0.map(l => l.toFixed(2)).join(' ')}, after ${loadavg().map(l => l.toFixed(2)).join(' ')} (${'2'} cores)`)
  }
  finally {
    for (const subscriber of subscribers) subscriber.close()
    for (const app of processes) await app.stop()
    await drop()
  }
}

await main()
