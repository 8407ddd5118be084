package transcript

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Format is a way to write a transcript out.
type Format string

// The formats.
const (
	TXT  Format = "txt"  // plain text, one utterance per line
	SRT  Format = "srt"  // SubRip subtitles
	VTT  Format = "vtt"  // WebVTT subtitles
	JSON Format = "json" // the whole Transcript: utterances, words, timings
)

// Formats lists every format.
var Formats = []Format{TXT, SRT, VTT, JSON}

// ParseFormat reads a format name; empty means TXT.
func ParseFormat(s string) (Format, bool) {
	if s == "" {
		return TXT, true
	}
	for _, f := range Formats {
		if string(f) == strings.ToLower(s) {
			return f, true
		}
	}
	return "", false
}

// ContentType is the media type of the format, for HTTP answers and files.
func (f Format) ContentType() string {
	switch f {
	case SRT:
		return "application/x-subrip; charset=utf-8"
	case VTT:
		return "text/vtt; charset=utf-8"
	case JSON:
		return "application/json; charset=utf-8"
	default:
		return "text/plain; charset=utf-8"
	}
}

// maxCueMs is how long one subtitle cue may stay on screen: longer
// utterances are split at word boundaries, so a reader is never left with a
// minute-long block of text.
const maxCueMs = 7000

// Render writes t in format f. An empty transcript renders as an empty text,
// empty subtitles (a bare WEBVTT header for vtt) or JSON with no utterances.
func Render(w io.Writer, t Transcript, f Format) error {
	switch f {
	case TXT:
		return renderTXT(w, t)
	case SRT:
		return renderCues(w, t, false)
	case VTT:
		return renderCues(w, t, true)
	case JSON:
		if t.Utterances == nil {
			t.Utterances = []Utterance{}
		}
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(t)
	}
	return fmt.Errorf("unknown transcript format %q", f)
}

// text is what a person reads of an utterance: the normalized text when
// there is one.
func (u Utterance) text() string {
	if u.Normal != "" {
		return u.Normal
	}
	return u.Text
}

func multiChannel(t Transcript) bool {
	for _, u := range t.Utterances {
		if u.Channel != t.Utterances[0].Channel {
			return true
		}
	}
	return false
}

func renderTXT(w io.Writer, t Transcript) error {
	speakers := multiChannel(t)
	var b strings.Builder
	for _, u := range t.Utterances {
		s := strings.TrimSpace(u.text())
		if s == "" {
			continue
		}
		if speakers {
			fmt.Fprintf(&b, "[%d] ", u.Channel+1)
		}
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

func renderCues(w io.Writer, t Transcript, vtt bool) error {
	var b strings.Builder
	if vtt {
		b.WriteString("WEBVTT\n\n")
	}
	speakers := multiChannel(t)
	n := 0
	for _, u := range t.Utterances {
		for _, c := range cuesOf(u) {
			n++
			text := c.text
			if speakers {
				text = fmt.Sprintf("[%d] %s", u.Channel+1, text)
			}
			if vtt {
				fmt.Fprintf(&b, "%s --> %s\n%s\n\n", stamp(c.start, '.'), stamp(c.end, '.'), text)
			} else {
				fmt.Fprintf(&b, "%d\n%s --> %s\n%s\n\n", n, stamp(c.start, ','), stamp(c.end, ','), text)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cuesOf splits an utterance into cues of at most maxCueMs by its words.
// The normalized text has no word timings, so a split utterance shows the
// recognized words; one that fits shows its normalized text.
func cuesOf(u Utterance) []cue {
	text := strings.TrimSpace(u.text())
	if text == "" {
		return nil
	}
	end := u.EndMs
	if end <= u.StartMs {
		end = u.StartMs + 1
	}
	if end-u.StartMs <= maxCueMs || len(u.Words) < 2 {
		return []cue{{u.StartMs, end, text}}
	}
	var out []cue
	cur := cue{start: u.Words[0].StartMs}
	var words []string
	for _, wd := range u.Words {
		if len(words) > 0 && wd.EndMs-cur.start > maxCueMs {
			cur.text = strings.Join(words, " ")
			out = append(out, cur)
			cur, words = cue{start: wd.StartMs}, nil
		}
		words = append(words, wd.Text)
		cur.end = wd.EndMs
	}
	cur.text = strings.Join(words, " ")
	return append(out, cur)
}

// stamp writes ms as HH:MM:SS,mmm (SRT) or HH:MM:SS.mmm (VTT).
func stamp(ms int64, sep byte) string {
	if ms < 0 {
		ms = 0
	}
	h := ms / 3_600_000
	m := ms / 60_000 % 60
	s := ms / 1000 % 60
	return fmt.Sprintf("%02d:%02d:%02d%c%03d", h, m, s, sep, ms%1000)
}
