package translate

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxRequestChars is the most characters the texts of one request may hold
// together: "The maximum total length of all strings is 10000 characters"
// (translate/api-ref/Translation/translate.md, texts[]). The limit is per
// request, the sum over its texts, not per text.
const MaxRequestChars = 10_000

// Chars is what one request with texts is billed, as the pricing counts
// it: every character, spaces and special characters included, and one
// for an empty request (translate/pricing.md, _includes/
// pricing-symbol-count.md). A character is a Unicode code point, not a
// byte: Cyrillic "привет" is 6, not 12.
func Chars(texts []string) int64 {
	var n int64
	for _, t := range texts {
		n += int64(utf8.RuneCountInString(t))
	}
	return max(n, 1)
}

// Estimate is what Translate sends for texts when every request is
// answered the first time: the number of requests and the characters
// billed (Result.BilledChars), for the caller to reserve before the call.
func Estimate(texts []string) (requests int, chars int64) {
	p := makePlan(texts, MaxRequestChars)
	for _, rq := range p.requests {
		chars += Chars(p.bodies(rq))
	}
	return len(p.requests), chars
}

// units is a text's length as the limit is checked here: UTF-16 code
// units. That is its count of code points in the Basic Multilingual Plane
// and two for a character outside it (most emoji), so a request under the
// limit in units is under it whether the API counts code points or UTF-16
// units (docs/platform.md, "Translate": which one is not documented).
func units(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// piece is one text sent, whole or a piece of a longer one.
type piece struct {
	text int    // the index of its text
	lead string // whitespace before the body, at the start of a text cut in pieces; not sent
	body string // what is sent
	sep  string // what joins it to the next piece of its text; not sent
}

// span is one request: pieces[from:to].
type span struct{ from, to int }

// plan is the requests of one call, in order.
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

// makePlan cuts texts into pieces of at most limit units (only a text over
// it is cut) and packs them, in order, into as few requests of at most
// limit units as that order allows. Blank texts are not sent.
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

// splitText cuts s into pieces of at most limit units; s itself when it
// fits. A cut is made at the best boundary in the second half of the
// piece's room: a paragraph break, else a line break, else a sentence's
// end, else any whitespace; failing those, at the last boundary of any
// kind; failing that (a long run with no space, such as Chinese without
// its full stops), at the last character that fits, never inside a
// character or before a combining mark. The whitespace at a cut is kept in
// sep (that at the end in the last piece's), and that at the start in the
// first piece's lead, to join the translations back; so no piece is blank.
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

// prefixWithin is the length in bytes of the longest prefix of s of at most
// limit units, at a character boundary.
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

// boundary is where to cut s, which starts with a character that is not
// whitespace, within its first room bytes: the piece is s[:cut], the
// separator s[cut:next], the whitespace after the cut.
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
	for kind := 0; kind < cutKinds; kind++ {
		if last[kind] > 0 && last[kind] >= room/2 {
			return last[kind], lastNext[kind]
		}
	}
	best := -1
	for kind := 0; kind < cutKinds; kind++ {
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

// joins: r belongs with the character before it (a combining mark, a zero
// width joiner), so a cut never goes before it.
func joins(r rune) bool {
	return unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == '\u200d'
}

// runEnd is the end of the whitespace run that holds byte i of s.
func runEnd(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += size
	}
	return i
}

// sentenceEnd: r ends a sentence when whitespace follows it.
func sentenceEnd(r rune) bool {
	switch r {
	case '.', '!', '?', '…':
		return true
	}
	return fullStop(r)
}

// fullStop: r ends a sentence with no whitespace after it, as in Chinese
// and Japanese.
func fullStop(r rune) bool {
	switch r {
	case '。', '！', '？', '｡':
		return true
	}
	return false
}

// closing: r may stand between a sentence's end and the whitespace after
// it (a closing quote or bracket).
func closing(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '»', '”', '’', '」', '』', '）':
		return true
	}
	return false
}

// assembly puts the translated pieces back together, text by text.
type assembly struct {
	texts    []string
	plan     plan
	out      []string // translations so far, by piece
	detected []string // by piece
	filled   int      // pieces translated: a prefix of plan.pieces
}

func newAssembly(texts []string, p plan) *assembly {
	return &assembly{texts: texts, plan: p, out: make([]string, len(p.pieces)), detected: make([]string, len(p.pieces))}
}

// fill records the answer of request s, one translation for each piece.
func (a *assembly) fill(s span, ans []translation) {
	for i, t := range ans {
		a.out[s.from+i], a.detected[s.from+i] = t.Text, t.DetectedLanguageCode
	}
	a.filled = s.to
}

// prefix is the texts translated so far, in order: every text before the
// first one with a piece not yet translated, blank ones as they are.
func (a *assembly) prefix() (texts, detected []string) {
	texts, detected = []string{}, []string{}
	k := 0 // the next piece
	for i, t := range a.texts {
		if k < len(a.plan.pieces) && a.plan.pieces[k].text == i {
			var b strings.Builder
			first := k
			for k < len(a.plan.pieces) && a.plan.pieces[k].text == i {
				if k >= a.filled {
					return texts, detected
				}
				b.WriteString(a.plan.pieces[k].lead)
				b.WriteString(a.out[k])
				b.WriteString(a.plan.pieces[k].sep)
				k++
			}
			texts, detected = append(texts, b.String()), append(detected, a.detected[first])
			continue
		}
		texts, detected = append(texts, t), append(detected, "")
	}
	return texts, detected
}
