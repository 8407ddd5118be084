package ffmpeg_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/media/ffmpeg"
)

// speech is n frames of 100 ms at a speaking level, with the frames in
// quiet set to level: a recording in the shape the level pass measures.
func speech(n int, quiet map[int]float64) []float64 {
	levels := make([]float64, n)
	for i := range levels {
		levels[i] = -18 - float64(i%3) // words, a little uneven
		if l, ok := quiet[i]; ok {
			levels[i] = l
		}
	}
	return levels
}

// pause is the frames from first to last, all at level.
func pause(first, last int, level float64) map[int]float64 {
	q := map[int]float64{}
	for i := first; i <= last; i++ {
		q[i] = level
	}
	return q
}

func merge(ms ...map[int]float64) map[int]float64 {
	out := map[int]float64{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func TestCuts(t *testing.T) {
	inf := math.Inf(-1)
	const frame = 100
	tests := []struct {
		name     string
		levels   []float64
		nominal  []int64
		window   time.Duration
		maxPiece time.Duration
		want     []int64
	}{
		{"the middle of a pause inside the window",
			speech(600, pause(230, 237, -60)), []int64{20_000}, 5 * time.Second, 0,
			[]int64{23_200}}, // the pause is 23.0–23.8 s: its quiet spans are 23.0–23.4 … 23.4–23.8, the nearest first
		{"digital silence, -Inf, is the quietest",
			speech(600, merge(pause(150, 157, -55), pause(260, 267, inf))), []int64{20_000}, 8 * time.Second, 0,
			[]int64{26_200}},
		{"a pause outside the window is not taken",
			speech(600, pause(300, 310, -70)), []int64{20_000}, 5 * time.Second, 0,
			[]int64{20_000}}, // no quiet span within 5 s: every span is as loud, and the nearest is the nominal cut
		{"of two equal pauses, the nearer",
			speech(600, merge(pause(160, 169, -60), pause(225, 234, -60))), []int64{20_000}, 5 * time.Second, 0,
			[]int64{22_700}},
		{"levels a fraction of a decibel apart count as equal",
			speech(600, merge(pause(160, 169, -60.3), pause(225, 234, -59.8))), []int64{20_000}, 5 * time.Second, 0,
			[]int64{22_700}},
		{"a clearly quieter pause wins over a nearer one",
			speech(600, merge(pause(160, 169, -70), pause(225, 234, -40))), []int64{20_000}, 5 * time.Second, 0,
			[]int64{16_800}},
		{"a pause as short as a word gap is not quiet enough",
			speech(600, merge(pause(205, 206, inf), pause(170, 175, -45))), []int64{20_000}, 5 * time.Second, 0,
			[]int64{17_400}},
		{"no quiet frame at all: each cut at its nominal point",
			speech(900, nil), []int64{30_000, 60_000}, 10 * time.Second, 0,
			[]int64{30_000, 60_000}},
		{"no quiet frame at all and a nominal cut off the frames' grid: the nearest span",
			flat(900, -20), []int64{30_040}, 10 * time.Second, 0,
			[]int64{30_000}},
		{"each cut has its own pause",
			speech(900, merge(pause(250, 256, -65), pause(630, 636, -65))), []int64{30_000, 60_000}, 10 * time.Second, 0,
			[]int64{25_500, 63_200}},
		{"the window shrinks so that the first piece keeps under maxPiece",
			speech(600, merge(pause(255, 262, -70), pause(215, 222, -40))), []int64{20_000, 40_000}, 10 * time.Second, 22 * time.Second,
			[]int64{21_700, 40_000}}, // the quietest pause is at 25.7 s, past 22 s: the quieter of what is left
		{"and so that the last piece keeps under it",
			speech(600, merge(pause(140, 147, -70), pause(170, 181, -40))), []int64{20_000}, 10 * time.Second, 42 * time.Second,
			[]int64{18_000}}, // the recording is 60 s: a cut in the quietest pause, at 14.6 s, would leave 45.4 s
		{"digital silence everywhere: the nominal cuts",
			flat(600, inf), []int64{20_000, 40_000}, 5 * time.Second, 0,
			[]int64{20_000, 40_000}},
		{"levels that end before the window: the nominal cut",
			speech(100, nil), []int64{20_000}, 5 * time.Second, 0,
			[]int64{20_000}},
		{"no levels at all", nil, []int64{20_000, 40_000}, 5 * time.Second, 0, []int64{20_000, 40_000}},
		{"nominal cuts closer than a frame still come out a frame apart",
			flat(600, -20), []int64{20_000, 20_050}, 0, 0, []int64{20_000, 20_100}},
		{"NaN counts as loud, not quiet",
			speech(600, merge(pause(205, 214, math.NaN()), pause(170, 177, -40))), []int64{20_000}, 5 * time.Second, 0,
			[]int64{17_600}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ffmpeg.Cuts(tt.levels, frame, tt.nominal, tt.window, tt.maxPiece)
			require.Equal(t, tt.want, got)
		})
	}
}

func flat(n int, level float64) []float64 {
	levels := make([]float64, n)
	for i := range levels {
		levels[i] = level
	}
	return levels
}

// Whatever the levels, the cuts keep their promises: ascending, a frame
// apart, within the window, no piece over maxPiece.
func TestCutsKeepTheirBounds(t *testing.T) {
	const frame = 100
	for seed := int64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewPCG(uint64(seed), 0))
		n := 200 + r.IntN(4000)
		levels := make([]float64, n)
		for i := range levels {
			levels[i] = -float64(r.IntN(90))
			if r.IntN(20) == 0 {
				levels[i] = math.Inf(-1)
			}
		}
		pieces := 2 + r.IntN(8)
		total := int64(n) * frame
		length := total / int64(pieces)
		var nominal []int64
		for i := 1; i < pieces; i++ {
			nominal = append(nominal, int64(i)*length)
		}
		window := time.Duration(r.IntN(int(length/4))+1) * time.Millisecond
		maxPiece := time.Duration(length+int64(r.IntN(int(length/2)+1))) * time.Millisecond
		cuts := ffmpeg.Cuts(levels, frame, nominal, window, maxPiece)
		require.Len(t, cuts, len(nominal))
		prev := int64(0)
		for i, c := range cuts {
			require.GreaterOrEqual(t, c-prev, int64(frame), "seed %d: cut %d a frame after the one before", seed, i)
			require.LessOrEqual(t, abs(c-nominal[i]), window.Milliseconds(), "seed %d: cut %d within the window", seed, i)
			require.LessOrEqual(t, c-prev, maxPiece.Milliseconds(), "seed %d: piece %d", seed, i)
			prev = c
		}
		require.LessOrEqual(t, total-prev, maxPiece.Milliseconds(), "seed %d: the last piece", seed)
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
