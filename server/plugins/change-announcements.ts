import { onAuditedCommit } from '~~/server/utils/db/audited-client'
import { announceChanges } from '~~/server/utils/changes/hub'

// The app's own writes announce their change events once committed (server/utils/changes/hub.ts):
// a notification inside each transaction would make concurrent commits wait for one another.
export default defineNitroPlugin(() => {
  onAuditedCommit(announceChanges)
})
