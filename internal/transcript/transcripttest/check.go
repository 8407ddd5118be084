// Package transcripttest checks that a rendered transcript is well formed,
// for the fuzz targets of the packages that make or read transcripts.
package transcripttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"transcriber/internal/transcript"
)

// RenderAll renders t in every format and checks each with Check.
func RenderAll(t transcript.Transcript) error {
	for _, f := range transcript.Formats {
		var b bytes.Buffer
		if err := transcript.Render(&b, t, f); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if err := Check(f, t, b.Bytes()); err != nil {
			return fmt.Errorf("%s: %w\n%q", f, err, b.String())
		}
	}
	return nil
}

var (
	srtTiming = regexp.MustCompile(`^(\d\d):([0-5]\d):([0-5]\d),(\d\d\d) --> (\d\d):([0-5]\d):([0-5]\d),(\d\d\d)$`)
	vttTiming = regexp.MustCompile(`^(\d\d):([0-5]\d):([0-5]\d)\.(\d\d\d) --> (\d\d):([0-5]\d):([0-5]\d)\.(\d\d\d)$`)
	// entities removes the escapes WebVTT cue text may hold.
	entities = strings.NewReplacer("&amp;", "", "&lt;", "", "&gt;", "")
	// voice is the WebVTT voice span a cue of a transcript with speakers
	// starts with: the one markup the renderer writes itself.
	voice = regexp.MustCompile(`^<v [^<>&]+>`)
)

// Check reports how out, the rendering of t in format f, is not well
// formed:
//   - every format: valid UTF-8, and no control character but newline and
//     tab;
//   - txt: one non-empty line per spoken utterance at most, each ending in a
//     newline;
//   - srt: blocks of "index\nHH:MM:SS,mmm --> HH:MM:SS,mmm\ntext" separated
//     by one blank line, numbered from 1, each starting before it ends, with
//     no blank line and no "-->" in the text;
//   - vtt: the "WEBVTT" header and a blank line, then such blocks without
//     the index and with "." before the milliseconds, in order of start
//     time, whose text has no "-->", no "<" and no "&" but in "&amp;",
//     "&lt;" or "&gt;", and a leading voice span ("<v Speaker 1>");
//   - json: parses back into a Transcript with t's times and speakers.
func Check(f transcript.Format, t transcript.Transcript, out []byte) error {
	if !utf8.Valid(out) {
		return fmt.Errorf("not valid UTF-8")
	}
	for _, r := range string(out) {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return fmt.Errorf("control character %U", r)
		}
	}
	s := string(out)
	switch f {
	case transcript.TXT:
		return checkTXT(t, s)
	case transcript.SRT:
		return checkCues(s, false)
	case transcript.VTT:
		rest, ok := strings.CutPrefix(s, "WEBVTT\n\n")
		if !ok {
			return fmt.Errorf("no WEBVTT header and blank line")
		}
		return checkCues(rest, true)
	case transcript.JSON:
		return checkJSON(t, out)
	}
	return fmt.Errorf("unknown format %q", f)
}

func checkTXT(t transcript.Transcript, s string) error {
	if s == "" {
		return nil
	}
	if !strings.HasSuffix(s, "\n") {
		return fmt.Errorf("the last line has no newline")
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) > len(t.Utterances) {
		return fmt.Errorf("%d lines for %d utterances", len(lines), len(t.Utterances))
	}
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			return fmt.Errorf("line %d is blank", i+1)
		}
	}
	return nil
}

func checkCues(s string, vtt bool) error {
	if s == "" {
		return nil
	}
	if !strings.HasSuffix(s, "\n\n") || strings.HasSuffix(s, "\n\n\n") {
		return fmt.Errorf("the last cue does not end with exactly one blank line")
	}
	timing := srtTiming
	if vtt {
		timing = vttTiming
	}
	prevStart := int64(-1)
	for i, block := range strings.Split(strings.TrimSuffix(s, "\n\n"), "\n\n") {
		lines := strings.Split(block, "\n")
		if !vtt {
			if lines[0] != strconv.Itoa(i+1) {
				return fmt.Errorf("cue %d: index line %q", i+1, lines[0])
			}
			lines = lines[1:]
		}
		if len(lines) < 2 {
			return fmt.Errorf("cue %d: no timing line and text: %q", i+1, block)
		}
		m := timing.FindStringSubmatch(lines[0])
		if m == nil {
			return fmt.Errorf("cue %d: timing line %q", i+1, lines[0])
		}
		start, end := millis(m[1:5]), millis(m[5:9])
		if start >= end {
			return fmt.Errorf("cue %d: starts at %d ms, ends at %d ms", i+1, start, end)
		}
		if vtt && start < prevStart {
			return fmt.Errorf("cue %d: starts at %d ms, before the cue before it (%d ms)", i+1, start, prevStart)
		}
		prevStart = start
		for _, l := range lines[1:] {
			if strings.TrimSpace(l) == "" {
				return fmt.Errorf("cue %d: a blank text line", i+1)
			}
			if strings.Contains(l, "-->") {
				return fmt.Errorf("cue %d: %q in the text", i+1, "-->")
			}
			if vtt && strings.ContainsAny(entities.Replace(voice.ReplaceAllString(l, "")), "<&") {
				return fmt.Errorf("cue %d: an unescaped < or & in the text", i+1)
			}
		}
	}
	return nil
}

// millis reads the hours, minutes, seconds and milliseconds of a timing.
func millis(parts []string) int64 {
	var n [4]int64
	for i, p := range parts {
		n[i], _ = strconv.ParseInt(p, 10, 64)
	}
	return ((n[0]*60+n[1])*60+n[2])*1000 + n[3]
}

func checkJSON(t transcript.Transcript, out []byte) error {
	var back transcript.Transcript
	if err := json.Unmarshal(out, &back); err != nil {
		return fmt.Errorf("does not parse back: %w", err)
	}
	if back.DurationMs != t.DurationMs || len(back.Utterances) != len(t.Utterances) {
		return fmt.Errorf("parses back as %d utterances and %d ms, not %d and %d",
			len(back.Utterances), back.DurationMs, len(t.Utterances), t.DurationMs)
	}
	for i, u := range back.Utterances {
		o := t.Utterances[i]
		if u.Channel != o.Channel || u.Speaker != o.Speaker || u.StartMs != o.StartMs || u.EndMs != o.EndMs || len(u.Words) != len(o.Words) {
			return fmt.Errorf("utterance %d parses back as %+v, not %+v", i, u, o)
		}
	}
	return nil
}
