package ffmpeg

import (
	"math"
	"time"
)

// levelFrameMs is the length of the frames the level pass measures: fine
// enough to find the pause between two sentences, coarse enough that the
// levels of a 6-hour recording are 216 000 numbers (1.7 MB).
const levelFrameMs = 100

// quietSpan is how many level frames around a cut must be quiet: 400 ms.
// The gaps between words inside a phrase are shorter than that, so a span
// that holds one also holds speech and is loud; a pause between phrases or
// sentences, or a breath, is longer, so the span fits inside it whatever
// its alignment to the frames. Its middle, the cut, is then at least
// 200 ms from the nearest sound, far more than the 20 ms Opus frame the
// encoder may move the cut by.
const quietSpan = 4

// maxCutShift is the farthest a cut moves from where the plan put it: a
// quarter of a piece's length, and at most a minute. A minute of speech
// without a pause of 400 ms does not happen, even in a monologue, so a
// longer search finds nothing better; and with a quarter, each piece
// stays between half and one and a half times its planned length, so the
// longest piece, which sets when the transcript is ready, stays close to
// the plan.
const maxCutShift = time.Minute

// cutWindow is how far a cut of a plan whose pieces are pieceMs long may
// move (see maxCutShift).
func cutWindow(pieceMs int64) time.Duration {
	return min(msDuration(pieceMs)/4, maxCutShift)
}

// Cuts chooses where to cut: for each nominal cut (ms from the start,
// ascending) the middle of the quietest span of quietSpan frames whose
// middle lies within window of it, where levels[i] is the loudness (dBFS,
// -Inf for digital silence) of frame i, each frameMs long. Ties go to the
// span nearest the nominal cut. The cuts returned are ascending and at
// least one frame apart; a cut never moves further than window, and a
// piece never gets longer than maxPiece (the window shrinks to keep that).
//
// A span's loudness is the mean power of its frames, in whole decibels:
// two pauses a fraction of a decibel apart are equally quiet, and the
// nearer one wins. A NaN level counts as loud (0 dBFS). Where no span
// lies within the window (the levels end before it), the cut stays at the
// nominal point, moved only as far as the rules above demand. maxPiece 0
// sets no bound; for the last piece, the recording ends with the levels.
// If nominal cuts are closer together than a frame, the one-frame rule
// wins over the window.
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

	// The earliest each cut may be so that the pieces after it can keep
	// under longest: the last piece ends with the recording, and each cut
	// can move at most w before its nominal point.
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
		// Candidate cuts are frame boundaries j*frameMs with a whole span
		// [j-half, j+half) of frames around them.
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
			cut = nom
			if lo > hi {
				cut = lo
			} else {
				cut = min(max(cut, lo), hi)
			}
		}
		cuts[i] = cut
		prev = cut
	}
	return cuts
}

// spanLoudness is the mean power of frames, in whole decibels relative to
// full scale; -Inf when all are digital silence.
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

// floorDiv is a/b rounded down, for b > 0.
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
