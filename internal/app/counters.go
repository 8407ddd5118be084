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
// "Hot rows"). The in-flight count is additive: its recount of the
// recognitions already running adds without a limit (quota.Spread's
// key#+), which only its reservations read. Every part of the App is
// given the same spread counters:
// a spread counter is read and changed only through them, and so must
// anything else that reads them (transcriber status).
func SpreadCounters(c quota.Counters) quota.Counters {
	return quota.Spread(c, quota.DefaultShards, []string{admission.RequestsKey, speechkit.SyncQuotaKey}, admission.InFlightKey)
}
