package ffmpeg

import (
	"math"
	"time"
)

// levelFrameMs finds the pause between sentences; 6 h are 1.7 MB of levels.
const levelFrameMs = 100

// quietSpan frames (400 ms) around a cut must be quiet: longer than the
// gaps between words, shorter than a pause or a breath, so the cut is
// 200 ms from sound, far over the 20 ms the encoder may move it.
const quietSpan = 4

// maxCutShift: a minute of speech without a 400 ms pause does not happen.
// A quarter of a piece keeps each within half and one and a half times
// its planned length.
const maxCutShift = time.Minute

func cutWindow(pieceMs int64) time.Duration {
	return min(msDuration(pieceMs)/4, maxCutShift)
}

// Cuts moves each nominal cut (ms, ascending) to the middle of the
// quietest span of quietSpan frames within window of it, ties to the
// nearest. Cuts come back ascending, at least a frame apart (which wins
// over window), never farther than window, no piece over maxPiece (0: no
// bound). Loudness is mean power in whole dB, so near-equal pauses go to
// the nearer; NaN counts loud. Without a span in the window the cut stays
// nominal, moved only as the rules demand.
func Cuts(levels []float64, frameMs int64, nominal []int64, window, maxPiece time.Duration) []int64 {
	if len(nominal) == 0 {
		return nil
	}
	frameMs = max(frameMs, 1)
	w := max(window.Milliseconds(), 0)
	longest := maxPiece.Milliseconds()
	if longest <= 0 {
		longest = math.MaxInt64 / 4
	}
	end := int64(len(levels)) * frameMs

	// The earliest each cut may be so that the pieces after it keep under longest.
	earliest := make([]int64, len(nominal))
	for i := len(nominal) - 1; i >= 0; i-- {
		lo := nominal[i] - w
		switch {
		case i < len(nominal)-1:
			lo = max(lo, earliest[i+1]-longest)
		case end > 0:
			lo = max(lo, end-longest)
		}
		earliest[i] = lo
	}

	cuts := make([]int64, len(nominal))
	half := int64(quietSpan / 2)
	prev := int64(0)
	for i, nom := range nominal {
		lo := max(earliest[i], prev+frameMs)
		hi := min(nom+w, prev+longest)
		cut, found := int64(0), false
		var best float64
		// Candidates: frame boundaries with a whole span around them.
		first := max(ceilDiv(lo, frameMs), half)
		last := min(floorDiv(hi, frameMs), int64(len(levels))-half)
		for j := first; j <= last; j++ {
			at := j * frameMs
			loud := spanLoudness(levels[j-half : j+half])
			if !found || loud < best || (loud == best && abs(at-nom) < abs(cut-nom)) {
				cut, best, found = at, loud, true
			}
		}
		if !found {
			cut = min(max(nom, lo), hi)
			if lo > hi {
				cut = lo
			}
		}
		cuts[i] = cut
		prev = cut
	}
	return cuts
}

// spanLoudness is mean power in whole dBFS; -Inf for digital silence.
func spanLoudness(frames []float64) float64 {
	var power float64
	for _, l := range frames {
		switch {
		case math.IsNaN(l):
			power++ // unknown counts as loud
		case math.IsInf(l, -1):
		default:
			power += math.Pow(10, l/10)
		}
	}
	if power == 0 {
		return math.Inf(-1)
	}
	return math.Round(10 * math.Log10(power/float64(len(frames))))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
