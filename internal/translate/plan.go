package translate

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxRequestChars bounds the sum over one request's texts
// (translate/api-ref/Translation/translate.md, texts[]).
const MaxRequestChars = 10_000

// Chars is what one request is billed: every code point, spaces included,
// and one for an empty request (translate/pricing.md).
func Chars(texts []string) int64 {
	var n int64
	for _, t := range texts {
		n += int64(utf8.RuneCountInString(t))
	}
	return max(n, 1)
}

// Estimate is Translate's BilledChars for texts when each request is
// answered the first time.
func Estimate(texts []string) (chars int64) {
	p := makePlan(texts, MaxRequestChars)
	for _, rq := range p.requests {
		chars += Chars(p.bodies(rq))
	}
	return chars
}

// units is s's length in UTF-16 code units, at least its code points: a
// request under the limit in units is under it whichever the API counts
// (undocumented: docs/platform.md, "Translate").
func units(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// piece is one text sent, whole or in part; lead and sep are not sent.
type piece struct {
	text int    // the index of its text
	lead string // a cut text's leading whitespace
	body string
	sep  string // what joins it to the next piece of its text
}

// span is one request: pieces[from:to].
type span struct{ from, to int }

type plan struct {
	pieces   []piece
	requests []span
}

func (p plan) bodies(s span) []string {
	out := make([]string, 0, s.to-s.from)
	for _, pc := range p.pieces[s.from:s.to] {
		out = append(out, pc.body)
	}
	return out
}

// makePlan cuts texts over limit units into pieces and packs all, in
// order, into as few requests of at most limit units as possible; blank
// texts are left out.
func makePlan(texts []string, limit int) plan {
	var p plan
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			continue
		}
		for _, pc := range splitText(t, limit) {
			pc.text = i
			p.pieces = append(p.pieces, pc)
		}
	}
	size := 0
	for i, pc := range p.pieces {
		u := units(pc.body)
		if len(p.requests) == 0 || size+u > limit {
			p.requests = append(p.requests, span{from: i, to: i})
			size = 0
		}
		p.requests[len(p.requests)-1].to = i + 1
		size += u
	}
	return p
}

// splitText cuts s into pieces of at most limit units, each at the best
// boundary in the second half of its room (paragraph, line, sentence,
// space), else the last boundary, else the last character that fits but
// never before a combining mark. Whitespace at the cuts and ends goes to
// sep and lead, so no piece is blank.
func splitText(s string, limit int) []piece {
	if units(s) <= limit {
		return []piece{{body: s}}
	}
	rest := strings.TrimLeftFunc(s, unicode.IsSpace)
	lead := s[:len(s)-len(rest)]
	s = strings.TrimRightFunc(rest, unicode.IsSpace)
	trail := rest[len(s):]
	var out []piece
	for units(s) > limit {
		room := prefixWithin(s, limit)
		if room == 0 { // one character over the whole limit: only with a tiny limit
			_, room = utf8.DecodeRuneInString(s)
		}
		cut, next := boundary(s, room)
		out = append(out, piece{body: s[:cut], sep: s[cut:next]})
		s = s[next:]
	}
	out = append(out, piece{body: s, sep: trail})
	out[0].lead = lead
	return out
}

// prefixWithin is the byte length of s's longest prefix within limit units.
func prefixWithin(s string, limit int) int {
	n := 0
	for i, r := range s {
		n += utf16.RuneLen(r)
		if n > limit {
			return i
		}
	}
	return len(s)
}

// Boundaries, best first.
const (
	cutParagraph = iota
	cutLine
	cutSentence
	cutSpace
	cutKinds
)

// boundary cuts s (not starting with whitespace) within room bytes: the
// piece is s[:cut], the whitespace after it s[cut:next].
func boundary(s string, room int) (cut, next int) {
	var last [cutKinds]int // the last cut of each kind; 0: none
	var lastNext [cutKinds]int
	prev := rune(0) // the last rune before the current whitespace run that is not a closing mark
	inRun, runStart, newlines := false, 0, 0
	seen := false // a piece up to here is not blank
	mark := func(kind, at, end int) {
		if at > 0 && seen {
			last[kind], lastNext[kind] = at, end
		}
	}
	for i, r := range s[:room] {
		if unicode.IsSpace(r) {
			if !inRun {
				inRun, runStart, newlines = true, i, 0
				end := runEnd(s, i)
				mark(cutSpace, runStart, end)
				if sentenceEnd(prev) {
					mark(cutSentence, runStart, end)
				}
			}
			if r == '\n' {
				newlines++
				end := runEnd(s, i)
				mark(cutLine, runStart, end)
				if newlines >= 2 {
					mark(cutParagraph, runStart, end)
				}
			}
			continue
		}
		inRun = false
		seen = true
		if !closing(r) {
			prev = r
		}
		if fullStop(r) {
			end := i + utf8.RuneLen(r)
			mark(cutSentence, end, runEnd(s, end))
		}
	}
	best := -1 // failing a cut in the second half, the last
	for kind := 0; kind < cutKinds; kind++ {
		if last[kind] > 0 && last[kind] >= room/2 {
			return last[kind], lastNext[kind]
		}
		if last[kind] > 0 && (best < 0 || last[kind] > last[best]) {
			best = kind
		}
	}
	if best >= 0 {
		return last[best], lastNext[best]
	}
	cut = room
	for cut > 0 {
		r, size := utf8.DecodeRuneInString(s[cut:])
		if size == 0 || !joins(r) {
			break
		}
		_, back := utf8.DecodeLastRuneInString(s[:cut])
		cut -= back
	}
	if cut == 0 {
		cut = room // a run of marks as long as the room: cut it anyway
	}
	return cut, runEnd(s, cut) // whitespace just past the room goes with the cut
}

// joins: r belongs with the character before it (combining mark, ZWJ).
func joins(r rune) bool {
	return unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == '\u200d'
}

// runEnd is the end of the whitespace run that holds byte i of s.
func runEnd(s string, i int) int { return len(s) - len(strings.TrimLeftFunc(s[i:], unicode.IsSpace)) }

func sentenceEnd(r rune) bool { return strings.ContainsRune(".!?…", r) || fullStop(r) }

// fullStop ends a sentence without whitespace after it (Chinese, Japanese).
func fullStop(r rune) bool { return strings.ContainsRune("。！？｡", r) }

// closing may stand between a sentence's end and the whitespace after it.
func closing(r rune) bool { return strings.ContainsRune("\"')]»”’」』）", r) }

// join puts the translated pieces (out, a prefix of p.pieces) back
// together: the texts before the first not wholly translated, blank ones
// as they are.
func (p plan) join(texts, out []string) []string {
	joined := []string{}
	k := 0 // the next piece
	for i, t := range texts {
		if k < len(p.pieces) && p.pieces[k].text == i {
			var b strings.Builder
			for ; k < len(p.pieces) && p.pieces[k].text == i; k++ {
				if k >= len(out) {
					return joined
				}
				b.WriteString(p.pieces[k].lead + out[k] + p.pieces[k].sep)
			}
			t = b.String()
		}
		joined = append(joined, t)
	}
	return joined
}
