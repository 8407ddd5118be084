package transcript

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Format is a way to write a transcript out.
type Format string

const (
	TXT  Format = "txt"
	SRT  Format = "srt"
	VTT  Format = "vtt"
	JSON Format = "json"
)

var Formats = []Format{TXT, SRT, VTT, JSON}

// ParseFormat reads a format name; empty means TXT.
func ParseFormat(s string) (Format, bool) {
	if f := Format(cmp.Or(strings.ToLower(s), string(TXT))); slices.Contains(Formats, f) {
		return f, true
	}
	return "", false
}

var contentTypes = map[Format]string{SRT: "application/x-subrip", VTT: "text/vtt", JSON: "application/json"}

func (f Format) ContentType() string {
	return cmp.Or(contentTypes[f], "text/plain") + "; charset=utf-8"
}

// maxCueMs bounds a cue on screen; longer utterances split at words.
const maxCueMs = 7000

// Render writes t in format f.
func Render(w io.Writer, t Transcript, f Format) error {
	switch f {
	case TXT:
		return renderTXT(w, t)
	case SRT:
		return renderCues(w, t, false)
	case VTT:
		return renderCues(w, t, true)
	case JSON:
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(cleaned(t))
	}
	return fmt.Errorf("unknown transcript format %q", f)
}

// text is the normalized text, or else the recognized, cleaned and trimmed.
func (u Utterance) text() string {
	if s := strings.TrimSpace(clean(u.Normal)); s != "" {
		return s
	}
	return strings.TrimSpace(clean(u.Text))
}

// clean keeps text on one line, so none can end a cue or a line: invalid
// UTF-8 becomes U+FFFD, breaks and tabs spaces, other controls go.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n', r == '\r', r == '\t', r == '\v', r == '\f', r == '\u0085', r == '\u2028', r == '\u2029':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
}

// cleaned is t with every text cleaned.
func cleaned(t Transcript) Transcript {
	t.Language = clean(t.Language)
	t.Utterances = append(make([]Utterance, 0, len(t.Utterances)), t.Utterances...)
	for i := range t.Utterances {
		u := &t.Utterances[i]
		u.Text, u.Normal, u.Words = clean(u.Text), clean(u.Normal), slices.Clone(u.Words)
		for j := range u.Words {
			u.Words[j].Text = clean(u.Words[j].Text)
		}
	}
	return t
}

// naming says whether every format names speakers, or else channels.
func naming(t Transcript) (speakers, channels bool) {
	for _, u := range t.Utterances {
		speakers = speakers || u.Speaker > 0
		channels = channels || u.Channel != t.Utterances[0].Channel
	}
	return speakers, channels && !speakers
}

// SpeakerName is how every format names speaker n (from 1).
func SpeakerName(n int) string { return fmt.Sprintf("Speaker %d", n) }

// renderTXT writes a line per utterance, "Speaker N: " when it changes, or
// "[1] " on two channels.
func renderTXT(w io.Writer, t Transcript) error {
	speakers, channels := naming(t)
	var b strings.Builder
	last := 0
	for _, u := range t.Utterances {
		s := u.text()
		if s == "" {
			continue
		}
		switch {
		case speakers && u.Speaker > 0 && u.Speaker != last:
			b.WriteString(SpeakerName(u.Speaker) + ": ")
		case channels:
			fmt.Fprintf(&b, "[%d] ", u.Channel+1)
		}
		last = u.Speaker
		b.WriteString(s)
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

type cue struct {
	start, end int64
	text       string
}

// maxStampMs keeps hours at two digits and time arithmetic from overflowing.
const maxStampMs = 100*3_600_000 - 1

// cueText keeps "-->", the timing line's mark, out of a cue; WebVTT's
// markup is escaped, which does that too.
func cueText(text string, vtt bool) string {
	if vtt {
		return vttEscaper.Replace(text)
	}
	for strings.Contains(text, "-->") {
		text = strings.ReplaceAll(text, "-->", "->")
	}
	return text
}

var vttEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// renderCues writes cues by start (WebVTT requires it), each ending after
// it starts, naming the speaker ("<v Speaker 1>" in WebVTT, "Speaker 1: "
// in SubRip) or the channel ("[1] ").
func renderCues(w io.Writer, t Transcript, vtt bool) error {
	var b strings.Builder
	if vtt {
		b.WriteString("WEBVTT\n\n")
	}
	speakers, channels := naming(t)
	var cues []cue
	for _, u := range t.Utterances {
		prefix, voice := "", "" // voice is our name, not the recognizer's text: not escaped
		switch {
		case channels:
			prefix = fmt.Sprintf("[%d] ", u.Channel+1)
		case speakers && u.Speaker > 0 && vtt:
			voice = "<v " + SpeakerName(u.Speaker) + ">"
		case speakers && u.Speaker > 0:
			prefix = SpeakerName(u.Speaker) + ": "
		}
		for _, c := range cuesOf(u) {
			c.text = voice + cueText(prefix+c.text, vtt)
			cues = append(cues, c)
		}
	}
	sort.SliceStable(cues, func(i, j int) bool { return cues[i].start < cues[j].start })
	for i, c := range cues {
		if vtt {
			fmt.Fprintf(&b, "%s --> %s\n%s\n\n", stamp(c.start, '.'), stamp(c.end, '.'), c.text)
		} else {
			fmt.Fprintf(&b, "%d\n%s --> %s\n%s\n\n", i+1, stamp(c.start, ','), stamp(c.end, ','), c.text)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func clampMs(ms, lo int64) int64 { return min(max(ms, lo), maxStampMs) }

// cuesOf splits an utterance into cues of at most maxCueMs by its words,
// which have no normalized text; one that fits shows the normalized text.
func cuesOf(u Utterance) []cue {
	text := u.text()
	if text == "" {
		return nil
	}
	start := min(clampMs(u.StartMs, 0), maxStampMs-1)
	end := clampMs(u.EndMs, start+1)
	type word struct {
		text       string
		start, end int64
	}
	var words []word
	for _, wd := range u.Words {
		if s := strings.TrimSpace(clean(wd.Text)); s != "" {
			ws := min(clampMs(wd.StartMs, 0), maxStampMs-1)
			words = append(words, word{s, ws, clampMs(wd.EndMs, ws+1)})
		}
	}
	if end-start <= maxCueMs || len(words) < 2 {
		return []cue{{start, end, text}}
	}
	sort.SliceStable(words, func(i, j int) bool { return words[i].start < words[j].start })
	var out []cue
	cur := cue{start: words[0].start, end: words[0].start + 1}
	var texts []string
	for _, wd := range words {
		if len(texts) > 0 && wd.end-cur.start > maxCueMs {
			cur.text = strings.Join(texts, " ")
			out = append(out, cur)
			cur, texts = cue{start: wd.start, end: wd.start + 1}, nil
		}
		texts = append(texts, wd.text)
		cur.end = max(cur.end, wd.end)
	}
	cur.text = strings.Join(texts, " ")
	return append(out, cur)
}

func stamp(ms int64, sep byte) string {
	ms = clampMs(ms, 0)
	return fmt.Sprintf("%02d:%02d:%02d%c%03d", ms/3_600_000, ms/60_000%60, ms/1000%60, sep, ms%1000)
}
