package oggopus_test

import (
	"testing"

	"transcriber/internal/media/oggopus"
	"transcriber/internal/media/oggopus/oggtest"
)

// FuzzMeter: whatever bytes ffmpeg were to write, in whatever pieces, the
// meter never panics, never counts backwards, never passes its limit by
// more than one packet without failing, and a stream it accepted whole
// counts the same written at once.
func FuzzMeter(f *testing.F) {
	f.Add(oggtest.Synth(1000, 0), uint8(7), int64(0))
	f.Add(oggtest.Synth(30_000, 5_000), uint8(200), int64(10_000))
	f.Add([]byte("OggS\x00\x02"), uint8(1), int64(1))
	f.Fuzz(func(t *testing.T, b []byte, chunk uint8, limit int64) {
		if limit < 0 {
			limit = -limit
		}
		m := &oggopus.Meter{LimitMs: limit}
		step := int(chunk) + 1
		var last int64
		var err error
		for i := 0; i < len(b) && err == nil; i += step {
			_, err = m.Write(b[i:min(i+step, len(b))])
			if m.Samples() < last {
				t.Fatalf("counted backwards: %d after %d", m.Samples(), last)
			}
			last = m.Samples()
		}
		if err == nil {
			err = m.Close()
		}
		if limit > 0 && err == nil && m.Ms() > limit+120 {
			t.Fatalf("%d ms accepted under a limit of %d", m.Ms(), limit)
		}
		if err != nil {
			return
		}
		whole := &oggopus.Meter{LimitMs: limit}
		if _, err := whole.Write(b); err != nil || whole.Close() != nil || whole.Samples() != m.Samples() {
			t.Fatalf("written at once: %d samples, err %v; in pieces: %d", whole.Samples(), err, m.Samples())
		}
	})
}

// FuzzCheck: whatever a sender uploads, Check never panics, and a file it
// passes holds what the Meter counts in it, or up to a frame more when its
// last granule position says so, in one logical stream of one or two
// channels.
func FuzzCheck(f *testing.F) {
	f.Add(oggtest.Synth(1000, 0))
	f.Add(oggtest.Synth(30_000, 5_000))
	f.Add(oggtest.Synth(3_000, 60_000))
	f.Add(oggtest.SynthChannels(2_000, 2))
	f.Add([]byte("OggS\x00\x02"))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := oggopus.Check(b)
		if err != nil {
			return
		}
		m := &oggopus.Meter{}
		if _, err := m.Write(b); err != nil || m.Close() != nil || w.Samples < m.Samples() || w.Samples > m.Samples()+960 {
			t.Fatalf("Check counted %d samples; the Meter %d (err %v)", w.Samples, m.Samples(), err)
		}
		if n, err := oggopus.Channels(b); err != nil || n != w.Channels || n < 1 || n > 2 {
			t.Fatalf("Check found %d channels; the header says %d (err %v)", w.Channels, n, err)
		}
	})
}
