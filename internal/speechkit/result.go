package speechkit

import (
	"cmp"
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"

	"transcriber/internal/transcript"
)

// Result reads a finished recognition as a transcript. Each final's first
// alternative is an utterance on its channel_tag (the speaker, with
// labeling); the refinement with the same channel and final index gives
// Normal (else Normal = Text). Sorted by start, then channel; DurationMs is
// the latest time mentioned; Language the most probable reported. The
// summarization's responses join by a blank line. No speech is an empty
// transcript.
func (c *Client) Result(ctx context.Context, operationID string) (transcript.Transcript, error) {
	ctx, err := c.onOperation(ctx, operationID)
	if err != nil {
		return transcript.Transcript{}, err
	}
	ctx, cancel := context.WithCancel(ctx) // ends the stream on an early return
	defer cancel()
	stream, err := c.stt.GetRecognition(ctx, &stt.GetRecognitionRequest{OperationId: operationID})
	if err != nil {
		return transcript.Transcript{}, c.classify(callResult, err)
	}
	a := newAssembler()
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return transcript.Transcript{}, c.classify(callResult, err)
		}
		a.add(resp)
	}
	return a.transcript(), nil
}

// finalKey names a final by channel and index, whichever way SpeechKit
// counts; a repeated key's refinement belongs to the latest final.
type finalKey struct {
	channel string
	index   int64
}

type assembler struct {
	utts       []transcript.Utterance
	normalized []bool
	byKey      map[finalKey]int
	durationMs int64
	langs      map[string]float64
	summary    []string
	usage      transcript.SummaryUsage
}

func newAssembler() *assembler {
	return &assembler{byKey: map[finalKey]int{}, langs: map[string]float64{}}
}

func (a *assembler) add(r *stt.StreamingResponse) {
	cur := r.GetAudioCursors()
	a.durationMs = max(a.durationMs, cur.GetFinalTimeMs(), cur.GetPartialTimeMs())
	tag := r.GetChannelTag()
	switch ev := r.GetEvent().(type) {
	case *stt.StreamingResponse_Final:
		alts := ev.Final.GetAlternatives()
		if len(alts) == 0 {
			return
		}
		a.byKey[finalKey{tag, cur.GetFinalIndex()}] = len(a.utts)
		a.utts = append(a.utts, utterance(channelNumber(tag), alts[0]))
		a.normalized = append(a.normalized, false)
		for _, l := range alts[0].GetLanguages() {
			a.langs[l.GetLanguageCode()] += l.GetProbability()
		}
	case *stt.StreamingResponse_FinalRefinement:
		alts := ev.FinalRefinement.GetNormalizedText().GetAlternatives()
		i, ok := a.byKey[finalKey{tag, ev.FinalRefinement.GetFinalIndex()}]
		if len(alts) == 0 || !ok {
			return
		}
		a.utts[i].Normal = alts[0].GetText()
		a.normalized[i] = true
	case *stt.StreamingResponse_Summarization:
		for _, r := range ev.Summarization.GetResults() {
			if text := strings.TrimSpace(r.GetResponse()); text != "" {
				a.summary = append(a.summary, text)
			}
		}
		u := ev.Summarization.GetContentUsage()
		a.usage = a.usage.Add(transcript.SummaryUsage{InputTextTokens: u.GetInputTextTokens(),
			CompletionTokens: u.GetCompletionTokens(), TotalTokens: u.GetTotalTokens()})
	}
}

func (a *assembler) transcript() transcript.Transcript {
	t := transcript.Transcript{DurationMs: a.durationMs, Utterances: []transcript.Utterance{}}
	for i, u := range a.utts {
		if !a.normalized[i] {
			u.Normal = u.Text
		}
		if u.Text == "" && u.Normal == "" {
			continue
		}
		t.DurationMs = max(t.DurationMs, u.EndMs)
		t.Utterances = append(t.Utterances, u)
	}
	slices.SortStableFunc(t.Utterances, func(a, b transcript.Utterance) int {
		return cmp.Or(cmp.Compare(a.StartMs, b.StartMs), cmp.Compare(a.Channel, b.Channel))
	})
	if len(a.summary) > 0 {
		t.Summary = &transcript.Summary{Text: strings.Join(a.summary, "\n\n"), Usage: a.usage}
	}
	var best float64
	for code, p := range a.langs {
		if code != "" && (p > best || p == best && code < t.Language) {
			t.Language, best = code, p
		}
	}
	return t
}

// utterance takes its words' start when it has no times, and ends no
// earlier than any word, so the duration covers every word.
func utterance(channel int, alt *stt.Alternative) transcript.Utterance {
	u := transcript.Utterance{Channel: channel, StartMs: alt.GetStartTimeMs(), EndMs: alt.GetEndTimeMs(), Text: alt.GetText()}
	untimed := u.StartMs == 0 && u.EndMs == 0
	for _, w := range alt.GetWords() {
		u.Words = append(u.Words, transcript.Word{Text: w.GetText(), StartMs: w.GetStartTimeMs(), EndMs: w.GetEndTimeMs()})
		u.EndMs = max(u.EndMs, w.GetEndTimeMs())
	}
	if untimed && len(u.Words) > 0 {
		u.StartMs = u.Words[0].StartMs
	}
	return u
}

// channelNumber reads a decimal tag; anything else is channel 0.
func channelNumber(tag string) int {
	n, err := strconv.Atoi(tag)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
