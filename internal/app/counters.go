package app

import (
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/quota"
	"transcriber/internal/speechkit"
)

// SpreadCounters spreads the counters every instance changes (the
// admission's request window and recognitions in flight, the synchronous
// quota's second) over quota.DefaultShards rows each, so instances
// reserving at once do not abort each other on one row (docs/database.md,
// "Hot rows"). Every part of the App is given the same spread counters:
// a spread counter is read and changed only through them, and so must
// anything else that reads them (transcriber status).
func SpreadCounters(c quota.Counters) quota.Counters {
	return quota.Spread(c, quota.DefaultShards, append(admission.InstallationKeys(), speechkit.SyncQuotaKey)...)
}
