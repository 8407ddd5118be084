package spend

import "transcriber/internal/job"

// SpeechKit bills asynchronous recognition (speechkit/pricing,
// "Asynchronous recognition", read 2026-12-01) by the second of two-channel
// audio: a file's length rounded up to seconds, its channels up to a pair,
// at least 15 s a pair (1 s of 3 channels: 30; 15.5 s of 2: 16). Deferred:
// the same units at another price.
const (
	MinBilledSeconds = 15
	// SubmittedChannels: the service submits mono or stereo, one pair.
	SubmittedChannels = 2
)

// BilledSeconds is what one file of durationMs and channels is billed.
func BilledSeconds(durationMs int64, channels int) int64 {
	secs := max(Seconds(durationMs), MinBilledSeconds)
	pairs := int64((max(channels, 1) + 1) / 2)
	return secs * pairs
}

// JobBilled is what j is billed: what a synchronous answer said, else its
// segments by the asynchronous rule.
func JobBilled(j job.Job) int64 {
	if j.BilledSeconds > 0 {
		return j.BilledSeconds
	}
	return JobBilledSeconds(j.Segments)
}

// JobBilledSeconds bills each segment as a file of its own.
func JobBilledSeconds(segs []job.Segment) int64 {
	var total int64
	for _, sg := range segs {
		total += BilledSeconds(sg.DurationMs, SubmittedChannels)
	}
	return total
}

// SyncUnitSeconds: synchronous recognition is billed in 15-second units of
// one channel, rounded up (the same page, "Synchronous recognition": 37 s
// is 45). An answer states what it billed (YaCloud-Billing-Units), which
// the client takes when it is whole units (speechkit.SyncResult).
const SyncUnitSeconds = 15

// SyncBilledSeconds is what durationMs of channels is billed synchronously.
func SyncBilledSeconds(durationMs int64, channels int) int64 {
	units := max((max(durationMs, 0)+SyncUnitSeconds*1000-1)/(SyncUnitSeconds*1000), 1)
	return units * SyncUnitSeconds * int64(max(channels, 1))
}
