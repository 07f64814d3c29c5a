import { credentialOfToken } from '~~/server/utils/api-log/credentials'
import { beginApiRequest, apiLogSource, isRecordingApiLog, setApiLogCredentialResolver } from '~~/server/utils/api-log/recorder'
import { applyApiLogRetention } from '~~/server/utils/api-log/retention'
import { setUpApiLogMetrics, startApiLogWriter, stopApiLogWriter } from '~~/server/utils/api-log/writer'

// The API log (server/utils/api-log/): every request of /api/v1, /rest/v1 and /mcp gets its
// Request-Id here (the public API's short way gives it in its own dispatch), entries are buffered
// and written in batches, everything buffered is written on a clean stop (SIGTERM), and the
// retention runs at start and then every 30 s (API_LOG_RETENTION_INTERVAL_MS), on one instance at a
// time (server/utils/jobs/).
const log = logger('api-log')

export default defineNitroPlugin((nitroApp) => {
  nitroApp.hooks.hook('request', (event) => {
    const source = apiLogSource(event.node.req.url ?? '/')
    if (source) beginApiRequest(event, source)
  })
  if (!isRecordingApiLog()) return
  setApiLogCredentialResolver(credentialOfToken)
  startApiLogWriter()
  if (isMeasuringRequests()) setUpApiLogMetrics()
  const retention = schedule({
    name: 'api-log-retention',
    everyMs: Number(setting('apiLogRetentionIntervalMs')) || 30_000,
    lockKey: 'api_log_retention',
    run: async () => {
      const result = await applyApiLogRetention(await useDb())
      if (result.partitions || result.entries) {
        log.info(`Retention: dropped ${result.partitions} day partition(s), deleted ${result.entries} entries`, result)
      }
    },
  })
  nitroApp.hooks.hook('close', async () => {
    await retention.stop()
    await stopApiLogWriter()
  })
})
