package spend

import "transcriber/internal/job"

// SpeechKit's rule for asynchronous recognition (its pricing page,
// yandex.cloud/en/docs/speechkit/pricing, "Asynchronous recognition", read
// 2026-12-01): the billing unit is one second of two-channel audio; a
// file's length is rounded up to whole seconds and its channels up to an
// even number, and a file shorter than 15 seconds is billed as 15 for
// every pair of channels. Its examples: 1 s of 1, 2 or 3 channels is
// billed 15, 15 or 30 seconds; 15.5 s of 2 or 4 channels 16 or 32. The
// deferred mode has the same units at another price.
const (
	// MinBilledSeconds is the least a file is billed for, per pair of
	// channels.
	MinBilledSeconds = 15
	// SubmittedChannels is the most channels a file the service submits
	// has: ffmpeg.Plan passes a file through only with 1 or 2, and Convert
	// keeps mono and stereo and downmixes more to stereo. Mono and stereo
	// are one pair of channels, billed the same.
	SubmittedChannels = 2
)

// BilledSeconds is what SpeechKit bills for recognizing one file
// durationMs long with channels channels (less than 1 counts as 1).
func BilledSeconds(durationMs int64, channels int) int64 {
	secs := max(Seconds(durationMs), MinBilledSeconds)
	pairs := int64((max(channels, 1) + 1) / 2)
	return secs * pairs
}

// JobBilled is what SpeechKit bills for job j: what the recognizer said
// it billed, when it said (j.BilledSeconds: a synchronous answer), else
// JobBilledSeconds of its segments by the asynchronous rule.
func JobBilled(j job.Job) int64 {
	if j.BilledSeconds > 0 {
		return j.BilledSeconds
	}
	return JobBilledSeconds(j.Segments)
}

// JobBilledSeconds is what SpeechKit bills for a job's recognitions: each
// segment is a file of its own, rounded on its own, of at most
// SubmittedChannels channels.
func JobBilledSeconds(segs []job.Segment) int64 {
	var total int64
	for _, sg := range segs {
		total += BilledSeconds(sg.DurationMs, SubmittedChannels)
	}
	return total
}

// SpeechKit's rule for synchronous recognition (the same pricing page,
// yandex.cloud/en/docs/speechkit/pricing, "Synchronous recognition"):
// "Billable unit — a 15-second segment of single-channel audio. Shorter
// segments are rounded up (1 second becomes 15 seconds)". Its examples: one
// fragment of 37 seconds is billed 45 (two whole units and a 7-second one
// rounded up); two of 5 and 8 seconds, 30. Each answer also states what it
// billed, in seconds, in its YaCloud-Billing-Units header
// (speechkit/stt/api/request-examples.md: 15 for a short file); the client
// takes that when it is a whole number of units (speechkit.SyncResult), and
// this rule when it is missing or is not.
const (
	// SyncUnitSeconds is synchronous recognition's billing unit, per
	// channel.
	SyncUnitSeconds = 15
)

// SyncBilledSeconds is what SpeechKit bills for recognizing durationMs of
// audio with channels channels (less than 1 counts as 1) synchronously:
// the length rounded up to whole 15-second units, at least one, for every
// channel. Synchronous recognition takes one channel only; the channels
// are here so the rule reads as the page states it.
func SyncBilledSeconds(durationMs int64, channels int) int64 {
	units := max((max(durationMs, 0)+SyncUnitSeconds*1000-1)/(SyncUnitSeconds*1000), 1)
	return units * SyncUnitSeconds * int64(max(channels, 1))
}
