package loadsim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
)

// run runs cfg and returns the run, for its parts, and its report.
func run(t *testing.T, cfg Config) (*sim, Report) {
	t.Helper()
	cfg.Dir = t.TempDir()
	s, err := start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.close() })
	r, err := s.wait()
	require.NoError(t, err)
	return s, r
}

// onlyJob returns the one job of a run.
func onlyJob(t *testing.T, s *sim) *tracked {
	t.Helper()
	require.Len(t, s.jobs, 1)
	for _, j := range s.jobs {
		return j
	}
	return nil
}

// The store calls of one step, at their round trip, are well under this.
const storeMargin = 500 * time.Millisecond

// A voice note alone, with synchronous recognition off, is submitted after
// its probe and checked every second in the call that took it: it ends
// within a second of its recognition (30 s of audio: 5 s and the fixed 3 s).
func TestAVoiceNoteEndsInItsIngestCall(t *testing.T) {
	s, r := run(t, Config{NoSync: true, Recordings: []Recording{{Class: "voice", Duration: 30 * time.Second, Voice: true}}})
	j := onlyJob(t, s)
	require.Equal(t, 1, r.Done)
	subs := s.rec.Submissions()
	require.Len(t, subs, 1)
	require.GreaterOrEqual(t, subs[0].Sub(j.submitted), s.cfg.ProbeTime, "submitted after its probe")
	recognized := subs[0].Add(8 * time.Second)
	require.False(t, j.ended.Before(recognized), "not before SpeechKit was done")
	require.Less(t, j.ended.Sub(recognized), time.Second+storeMargin, "found at the next check")
	require.Equal(t, map[string]int{"ingest": 1}, r.Calls, "the timer found nothing to do")
	require.Equal(t, 1, r.Requests)
	require.Equal(t, r.P50, j.ended.Sub(j.submitted))
}

// A voice note of 20 s alone is recognized synchronously in the call that
// took it, sent as it is: no probe and no conversion before its one
// synchronous request, which answers in SyncFixed and a third of
// SyncPerMinute, and no asynchronous request. A 20-second M4A is probed
// and converted first.
func TestAShortVoiceNoteIsAnsweredSynchronously(t *testing.T) {
	for name, voice := range map[string]bool{"voice note": true, "M4A": false} {
		t.Run(name, func(t *testing.T) {
			s, r := run(t, Config{Recordings: []Recording{{Class: "short", Duration: 20 * time.Second, Voice: voice}}})
			j := onlyJob(t, s)
			require.Equal(t, 1, r.Done)
			require.Equal(t, 1, r.SyncJobs)
			require.True(t, j.sync)
			require.Zero(t, r.Requests, "no asynchronous request")
			syncs := s.rec.SyncRequests()
			require.Len(t, syncs, 1)
			if voice {
				require.Zero(t, s.media.probes.Load()+s.media.conversions.Load(), "neither probed nor converted")
			} else {
				require.Equal(t, int64(1), s.media.probes.Load())
				require.Equal(t, int64(1), s.media.conversions.Load())
				converted := s.cfg.ProbeTime + time.Duration(float64(20*time.Second)/s.cfg.ConvertSpeed)
				require.GreaterOrEqual(t, syncs[0].Sub(j.submitted), converted, "sent after its probe and conversion")
			}
			answered := syncs[0].Add(s.cfg.SyncFixed + s.cfg.SyncPerMinute/3)
			require.False(t, j.ended.Before(answered))
			require.Less(t, j.ended.Sub(answered), storeMargin, "done when the answer came")
			require.Equal(t, map[string]int{"ingest": 1}, r.Calls)
		})
	}
}

// Voice notes of 10 s arriving in the same instant, with call slots for
// all: the pipeline's pacing sends 20 synchronously at once and has the
// rest wait within their calls for the next places, 2 s on, so SpeechKit
// never refuses one and no second holds more than 20. 30 notes are all
// answered synchronously; of 60, the 20 that find no place then either
// go the asynchronous way. All end done.
func TestTheSynchronousDoorKeepsTwentyInAnySecond(t *testing.T) {
	for _, tc := range []struct{ notes, sync int }{{30, 30}, {60, 40}} {
		t.Run(fmt.Sprint(tc.notes), func(t *testing.T) {
			var recs []Recording
			for range tc.notes {
				recs = append(recs, Recording{Class: "voice", Duration: 10 * time.Second, Voice: true})
			}
			s, r := run(t, Config{Recordings: recs, CallSlots: tc.notes + 10, ProbeTime: time.Millisecond})
			require.Equal(t, tc.notes, r.Done)
			require.Equal(t, tc.sync, r.SyncJobs)
			require.Equal(t, tc.sync, r.SyncRequests)
			require.Equal(t, tc.notes-tc.sync, r.SyncMissed, "no place within the wait: asynchronous")
			require.Equal(t, tc.notes-tc.sync, r.Requests)
			require.Zero(t, r.SyncRefused)
			require.LessOrEqual(t, r.PeakSyncSecond, 20)
			syncs := s.rec.SyncRequests()
			require.Greater(t, syncs[20].Sub(syncs[19]), time.Second, "the 21st waited for the first twenty's windows")
		})
	}
}

// An hour recognized in one piece is converted at ConvertSpeed, then
// checked by the poll timer every minute (the longest pause between
// checks): it ends within a minute of its recognition (10 min and 3 s).
// In pieces it is 12 of 5 minutes, submitted together, each done in 53 s.
func TestAnHourIsCheckedByThePollTimer(t *testing.T) {
	for _, tc := range []struct {
		mode       Mode
		pieces     int
		recognized time.Duration
	}{
		{OnePiece, 1, 10*time.Minute + 3*time.Second},
		{Pieces, 12, 53 * time.Second},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			s, r := run(t, Config{Mode: tc.mode, Recordings: []Recording{{Class: "long", Duration: time.Hour}}})
			j := onlyJob(t, s)
			require.Equal(t, 1, r.Done)
			subs := s.rec.Submissions()
			require.Len(t, subs, tc.pieces)
			converted := time.Duration(float64(time.Hour) / s.cfg.ConvertSpeed)
			require.GreaterOrEqual(t, subs[0].Sub(j.submitted), converted, "converted first")
			recognized := subs[len(subs)-1].Add(tc.recognized)
			require.False(t, j.ended.Before(recognized))
			require.Less(t, j.ended.Sub(recognized), time.Minute+storeMargin)
			require.Positive(t, r.Calls["poll"])
		})
	}
}

// Six hours in pieces: the ingest call's level pass and conversion (4 min
// 22 s at 95× real time) outlive the claim's lease of 2 minutes. The
// pipeline's heartbeat renews the claim every 30 s of simulated time, so
// the call keeps the job from its claim to its submission: the timer's
// sweep never takes it back, and it ends done.
func TestALongConversionKeepsItsClaim(t *testing.T) {
	s, r := run(t, Config{Mode: Pieces, Recordings: []Recording{{Class: "long", Duration: 6 * time.Hour}}})
	j := onlyJob(t, s)
	require.Equal(t, 1, r.Done, "%v", r.FailedBy)
	require.Equal(t, 1, r.Calls["ingest"])
	subs := s.rec.Submissions()
	require.Len(t, subs, 24)
	converted := time.Duration(float64(6*time.Hour) / s.cfg.ConvertSpeed)
	require.Greater(t, subs[0].Sub(j.submitted), converted, "longer than the lease")
	require.GreaterOrEqual(t, r.StoreCalls["Renew"], int(converted/job.RenewEvery), "renewed every 30 s meanwhile")
	require.Equal(t, int64(1), s.media.probes.Load(), "one attempt: the sweep never took the job back")
}

// A load larger than the quotas: with 70 requests an hour (10 in each
// 10-minute window) and 3 call slots, 24 voice notes and a recording of
// 20 minutes all end done, with no window over its 10 and no hour over 70,
// calls waiting for slots, and never more than 3 running. The recording,
// converted while the voice notes fill the window, finds it over half used
// and goes as one file, not 4 pieces (pipeline's room for pieces): 25
// requests. The same load gives the same report twice.
func TestALoadKeepsThePlatformsLimits(t *testing.T) {
	recs := Mixed([]Class{
		{Name: "voice", Share: 24.0 / 25, Min: 5 * time.Second, Max: time.Minute, Voice: true},
		{Name: "long", Share: 1.0 / 25, Min: 20 * time.Minute, Max: 20 * time.Minute},
	}, 25, time.Minute, 7)
	cfg := Config{Mode: Pieces, Recordings: recs, RequestsPerHour: 70, CallSlots: 3, ChecksPerSecond: 1000, NoSync: true}
	s, r := run(t, cfg)

	require.Equal(t, 25, r.Done)
	require.Equal(t, 24+1, r.Requests)
	perWindow := map[time.Time]int{}
	for _, at := range s.rec.Submissions() {
		perWindow[at.Truncate(10*time.Minute)]++
	}
	for w, n := range perWindow {
		require.LessOrEqual(t, n, 10, "window %s", w)
	}
	require.GreaterOrEqual(t, len(perWindow), 3, "25 requests need three windows")
	require.LessOrEqual(t, r.PeakRequestHour, 70)
	require.Positive(t, r.QuotaHeld)
	require.Positive(t, r.CallWaits)
	require.Equal(t, 3, r.BusiestSlots)
	require.Empty(t, r.CallsFailed)
	require.Contains(t, r.SaturatedFirst(), "function concurrency")

	_, again := run(t, cfg)
	require.Equal(t, r, again)
}

func TestMixedKeepsItsShares(t *testing.T) {
	recs := Mixed(DefaultMix, 1000, time.Minute, 1)
	require.Len(t, recs, 1000)
	count := map[string]int{}
	for _, rec := range recs {
		count[rec.Class]++
		require.Less(t, rec.At, time.Minute)
		var c Class
		for _, m := range DefaultMix {
			if m.Name == rec.Class {
				c = m
			}
		}
		require.GreaterOrEqual(t, rec.Duration, c.Min)
		require.LessOrEqual(t, rec.Duration, c.Max)
		require.Equal(t, c.Voice, rec.Voice)
	}
	require.Equal(t, map[string]int{"voice ≤30 s": 318, "voice 30 s–1 min": 382, "1–5 min": 150, "5–30 min": 120, "1–3 h": 30}, count)
	require.Equal(t, recs, Mixed(DefaultMix, 1000, time.Minute, 1), "the same seed, the same load")
	require.NotEqual(t, recs, Mixed(DefaultMix, 1000, time.Minute, 2))
}

func TestPercentilesAndPeaks(t *testing.T) {
	var ds []time.Duration
	for i := 10; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Second)
	}
	require.Equal(t, 5*time.Second, percentile(ds, 50))
	require.Equal(t, 10*time.Second, percentile(ds, 95))
	require.Equal(t, 1*time.Second, percentile(ds, 1))
	require.Zero(t, percentile(nil, 50))

	at := func(s ...int) []time.Time {
		var ts []time.Time
		for _, n := range s {
			ts = append(ts, t0.Add(time.Duration(n)*time.Minute))
		}
		return ts
	}
	require.Equal(t, 3, peakIn(at(0, 60, 61, 62, 200), time.Hour), "60, 61 and 62 share an hour; 0 and 60, an hour apart, do not")
	require.Zero(t, peakIn(nil, time.Hour))
}
