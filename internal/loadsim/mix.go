package loadsim

import (
	"math/rand/v2"
	"time"
)

// Class is a kind of recording in a load: its share of the jobs and the
// range its lengths are spread over, evenly.
type Class struct {
	Name     string
	Share    float64
	Min, Max time.Duration
	Voice    bool // a voice note in OGG/Opus; otherwise M4A, converted
}

// DefaultMix is the load of `make bench-load`: mostly voice notes sent
// to the bot, some recorded calls and meetings, a few lectures and long
// meetings. The shares are a convention of this model, not a measurement:
// change them to model another installation. The voice notes, 70 % of the
// jobs spread evenly over 5 s to 1 min, are two classes split at
// synchronous recognition's 30 s: 25/55 of them up to 30 s, 30/55 over.
var DefaultMix = []Class{
	{Name: "voice ≤30 s", Share: 0.70 * 25 / 55, Min: 5 * time.Second, Max: 30 * time.Second, Voice: true},
	{Name: "voice 30 s–1 min", Share: 0.70 * 30 / 55, Min: 30*time.Second + time.Second, Max: time.Minute, Voice: true},
	{Name: "1–5 min", Share: 0.15, Min: time.Minute, Max: 5 * time.Minute},
	{Name: "5–30 min", Share: 0.12, Min: 5 * time.Minute, Max: 30 * time.Minute},
	{Name: "1–3 h", Share: 0.03, Min: time.Hour, Max: 3 * time.Hour},
}

// Mixed returns n recordings in the shares of mix (rounded; the last
// class takes what rounding leaves), their lengths drawn evenly from each
// class's range and their uploads spread evenly over the span within,
// in a random order. The same seed gives the same load.
func Mixed(mix []Class, n int, within time.Duration, seed uint64) []Recording {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var out []Recording
	for i, c := range mix {
		k := int(c.Share*float64(n) + 0.5)
		if i == len(mix)-1 {
			k = n - len(out)
		}
		for range k {
			d := c.Min + time.Duration(rng.Int64N(int64(c.Max-c.Min)+1))
			out = append(out, Recording{Class: c.Name, Duration: d.Round(time.Second), Voice: c.Voice})
		}
	}
	rng.Shuffle(len(out), func(i, k int) { out[i], out[k] = out[k], out[i] })
	for i := range out {
		out[i].At = within * time.Duration(i) / time.Duration(max(len(out), 1))
	}
	return out
}
