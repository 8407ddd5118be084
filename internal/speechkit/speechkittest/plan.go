package speechkittest

import (
	"strconv"

	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"
	"google.golang.org/grpc/status"

	"transcriber/internal/transcript"
)

// Plan is what the fake does with one RecognizeFile request.
type Plan struct {
	// Err, when set, is what RecognizeFile returns (e.g.
	// status.Error(codes.Unavailable, "…")); no operation is made.
	Err error
	// PendingChecks is how many OperationService.Get calls answer
	// done = false before the operation is done.
	PendingChecks int
	// CheckErr, when set, is what every OperationService.Get of the
	// operation returns (e.g. status.Error(codes.ResourceExhausted, …)
	// for a check over the quota); the operation itself runs on.
	CheckErr error
	// OpErr, when set, is the error the operation finishes with.
	OpErr *status.Status
	// Utterances are what GetRecognition streams, as a `final` and (when
	// Normal is set) a `final_refinement` message each, in this order, with
	// the channel as channel_tag and per-channel final indices.
	Utterances []transcript.Utterance
	// Summary, when set, is streamed after the utterances' messages as a
	// `summarization` message: its text as one response, with its usage.
	Summary *transcript.Summary
	// Responses, when not nil, are streamed instead of Utterances' and
	// Summary's messages.
	Responses []*stt.StreamingResponse
	// ResultErr, when set, ends the GetRecognition stream after its messages.
	ResultErr error
}

// DefaultPlan is the plan when no script is set: done at the first check,
// one utterance "привет мир" on channel 0.
func DefaultPlan() Plan {
	return Plan{Utterances: []transcript.Utterance{{
		Channel: 0,
		StartMs: 0,
		EndMs:   1200,
		Text:    "привет мир",
		Normal:  "Привет мир.",
		Words: []transcript.Word{
			{Text: "привет", StartMs: 120, EndMs: 560},
			{Text: "мир", StartMs: 640, EndMs: 1100},
		},
	}}}
}

// Messages converts utterances into the messages SpeechKit streams for them:
// a `final` with the utterance's text, words and times, then, when Normal is
// set, the matching `final_refinement` with the normalized text. Final
// indices count per channel.
func Messages(utts []transcript.Utterance) []*stt.StreamingResponse {
	var out []*stt.StreamingResponse
	next := map[int]int64{}
	for _, u := range utts {
		tag := strconv.Itoa(u.Channel)
		idx := next[u.Channel]
		next[u.Channel]++
		cursors := func() *stt.AudioCursors {
			return &stt.AudioCursors{FinalIndex: idx, FinalTimeMs: u.EndMs, PartialTimeMs: u.EndMs}
		}
		out = append(out, &stt.StreamingResponse{
			ChannelTag:   tag,
			AudioCursors: cursors(),
			Event: &stt.StreamingResponse_Final{Final: &stt.AlternativeUpdate{
				Alternatives: []*stt.Alternative{alternative(u.Text, u)},
			}},
		})
		if u.Normal == "" {
			continue
		}
		out = append(out, &stt.StreamingResponse{
			ChannelTag:   tag,
			AudioCursors: cursors(),
			Event: &stt.StreamingResponse_FinalRefinement{FinalRefinement: &stt.FinalRefinement{
				FinalIndex: idx,
				Type: &stt.FinalRefinement_NormalizedText{NormalizedText: &stt.AlternativeUpdate{
					Alternatives: []*stt.Alternative{alternative(u.Normal, u)},
				}},
			}},
		})
	}
	return out
}

func alternative(text string, u transcript.Utterance) *stt.Alternative {
	alt := &stt.Alternative{Text: text, StartTimeMs: u.StartMs, EndTimeMs: u.EndMs}
	for _, w := range u.Words {
		alt.Words = append(alt.Words, &stt.Word{Text: w.Text, StartTimeMs: w.StartMs, EndTimeMs: w.EndMs})
	}
	return alt
}

// PlanFor is the plan when no script is set: DefaultPlan, answering the
// request's options as SpeechKit would. With speaker labeling on, a second
// phrase follows from the other speaker (channel_tag "1"); with a summary
// asked for, the summary FakeSummary, after the recognition's messages.
func PlanFor(req *stt.RecognizeFileRequest) Plan {
	p := DefaultPlan()
	if req.GetSpeakerLabeling().GetSpeakerLabeling() == stt.SpeakerLabelingOptions_SPEAKER_LABELING_ENABLED {
		p.Utterances = append(p.Utterances, transcript.Utterance{
			Channel: 1, StartMs: 1500, EndMs: 2400, Text: "и тебе привет", Normal: "И тебе привет.",
			Words: []transcript.Word{{Text: "и", StartMs: 1500, EndMs: 1600}, {Text: "тебе", StartMs: 1650, EndMs: 1900},
				{Text: "привет", StartMs: 1950, EndMs: 2400}},
		})
	}
	if len(req.GetSummarization().GetProperties()) > 0 {
		s := FakeSummary
		p.Summary = &s
	}
	return p
}

// FakeSummary is the summary PlanFor answers.
var FakeSummary = transcript.Summary{
	Text:  "Двое здороваются.",
	Usage: transcript.SummaryUsage{InputTextTokens: 150, CompletionTokens: 80, TotalTokens: 230},
}

// SummaryMessage is the `summarization` message SpeechKit streams for s.
func SummaryMessage(s transcript.Summary) *stt.StreamingResponse {
	return &stt.StreamingResponse{Event: &stt.StreamingResponse_Summarization{Summarization: &stt.Summarization{
		Results: []*stt.SummarizationPropertyResult{{Response: s.Text}},
		ContentUsage: &stt.ContentUsage{
			InputTextTokens: s.Usage.InputTextTokens, CompletionTokens: s.Usage.CompletionTokens, TotalTokens: s.Usage.TotalTokens,
		},
	}}}
}

func (p Plan) messages() []*stt.StreamingResponse {
	if p.Responses != nil {
		return p.Responses
	}
	out := Messages(p.Utterances)
	if p.Summary != nil {
		out = append(out, SummaryMessage(*p.Summary))
	}
	return out
}
