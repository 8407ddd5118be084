package speechkit

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"

	"transcriber/internal/transcript/transcripttest"
)

// script turns fuzz bytes into SpeechKit's GetRecognition messages: finals
// with words and languages, refinements, other events, each with audio
// cursors; texts and channel tags come from a pool of fuzzed strings.
type script struct {
	b     []byte
	texts []string
}

func (s *script) byte() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

// ms is a time as SpeechKit could send it, plausible or not.
func (s *script) ms() int64 {
	switch s.byte() % 6 {
	case 0:
		return int64(s.byte()) * 100
	case 1:
		return int64(s.byte())<<8 | int64(s.byte())*10
	case 2:
		return -int64(s.byte())
	case 3:
		return math.MaxInt64 - int64(s.byte())
	case 4:
		return math.MinInt64 + int64(s.byte())
	default:
		var raw [8]byte
		for i := range raw {
			raw[i] = s.byte()
		}
		return int64(binary.BigEndian.Uint64(raw[:]))
	}
}

func (s *script) text() string { return s.texts[int(s.byte())%len(s.texts)] }

func (s *script) tag() string {
	switch s.byte() % 5 {
	case 0:
		return "0"
	case 1:
		return "1"
	case 2:
		return "2"
	case 3:
		return "-1"
	default:
		return s.text()
	}
}

func (s *script) cursors() *stt.AudioCursors {
	return &stt.AudioCursors{FinalIndex: int64(s.byte() % 4), FinalTimeMs: s.ms(), PartialTimeMs: s.ms()}
}

func (s *script) alternative() *stt.Alternative {
	alt := &stt.Alternative{Text: s.text(), StartTimeMs: s.ms(), EndTimeMs: s.ms()}
	for range s.byte() % 6 {
		alt.Words = append(alt.Words, &stt.Word{Text: s.text(), StartTimeMs: s.ms(), EndTimeMs: s.ms()})
	}
	for range s.byte() % 3 {
		alt.Languages = append(alt.Languages, &stt.LanguageEstimation{LanguageCode: s.text(), Probability: float64(s.byte()) / 255})
	}
	return alt
}

func (s *script) responses() []*stt.StreamingResponse {
	var out []*stt.StreamingResponse
	for len(s.b) > 0 && len(out) < 64 {
		r := &stt.StreamingResponse{ChannelTag: s.tag(), AudioCursors: s.cursors()}
		switch s.byte() % 4 {
		case 0, 1:
			var alts []*stt.Alternative
			for range s.byte() % 3 {
				alts = append(alts, s.alternative())
			}
			r.Event = &stt.StreamingResponse_Final{Final: &stt.AlternativeUpdate{Alternatives: alts}}
		case 2:
			r.Event = &stt.StreamingResponse_FinalRefinement{FinalRefinement: &stt.FinalRefinement{
				FinalIndex: int64(s.byte() % 4),
				Type: &stt.FinalRefinement_NormalizedText{NormalizedText: &stt.AlternativeUpdate{
					Alternatives: []*stt.Alternative{{Text: s.text()}},
				}},
			}}
		default:
			r.Event = &stt.StreamingResponse_EouUpdate{EouUpdate: &stt.EouUpdate{TimeMs: s.ms()}}
		}
		out = append(out, r)
	}
	return out
}

// FuzzResultRender: whatever SpeechKit streams — texts with "-->", line
// breaks, control characters or invalid UTF-8, times huge, negative or out
// of order, odd channel tags — the assembled transcript keeps its contract
// (sorted by start and channel, no empty utterance, a duration covering
// every end, a language SpeechKit named) and renders well formed in every
// format (transcripttest.Check).
func FuzzResultRender(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 0, 1, 0, 2, 5, 0, 7, 0, 9, 1, 0, 1, 0, 2, 1, 0, 3, 2}, "привет мир|Привет, мир!|ru-RU|en-US")
	f.Add([]byte{4, 1, 3, 5, 2, 0, 1, 1, 5, 3, 9, 4, 9, 5, 1, 2, 3, 4, 5, 6, 7, 8, 2, 2, 0, 3, 3, 4, 1}, "a --> b\n\nc|\r\n|\x00\x1b\x7f|\xff\xfe|<b>&amp;")
	f.Add([]byte{1, 0, 3, 3, 0, 1, 2, 5, 4, 9, 2, 4, 1, 3, 1, 0, 1, 2, 2, 5, 0, 0, 2, 5, 3, 3}, "x|y z|")
	f.Fuzz(func(t *testing.T, raw []byte, pool string) {
		s := &script{b: raw, texts: strings.Split(pool, "|")}
		names := map[string]bool{"": true}
		for _, n := range s.texts {
			names[n] = true
		}
		a := newAssembler()
		for _, r := range s.responses() {
			a.add(r)
		}
		tr := a.transcript()

		for i, u := range tr.Utterances {
			if u.Text == "" && u.Normal == "" {
				t.Fatalf("utterance %d has no text", i)
			}
			if u.Channel < 0 {
				t.Fatalf("utterance %d on channel %d", i, u.Channel)
			}
			if tr.DurationMs < u.EndMs {
				t.Fatalf("duration %d ms ends before utterance %d (%d ms)", tr.DurationMs, i, u.EndMs)
			}
			for _, w := range u.Words {
				if tr.DurationMs < w.EndMs || u.EndMs < w.EndMs {
					t.Fatalf("utterance %d ends at %d ms and the transcript at %d ms, before its word %+v", i, u.EndMs, tr.DurationMs, w)
				}
			}
			if i > 0 {
				p := tr.Utterances[i-1]
				if p.StartMs > u.StartMs || p.StartMs == u.StartMs && p.Channel > u.Channel {
					t.Fatalf("utterances %d and %d out of order", i-1, i)
				}
			}
		}
		if !names[tr.Language] {
			t.Fatalf("language %q was never reported", tr.Language)
		}
		if err := transcripttest.RenderAll(tr); err != nil {
			t.Fatal(err)
		}
	})
}
