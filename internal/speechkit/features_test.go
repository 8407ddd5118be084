package speechkit_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"

	"transcriber/internal/errs"
	"transcriber/internal/speechkit"
	"transcriber/internal/speechkit/speechkittest"
	"transcriber/internal/transcript"
)

// Speaker labeling and a summary reach RecognizeFile as SpeechKit's own
// options; a request without them carries neither.
func TestSubmitAsksForSpeakersAndASummary(t *testing.T) {
	srv := speechkittest.Start(t)
	c := mustClient(t, srv.Config())
	r := uriRequest
	r.Speakers = true
	r.Summary = &speechkit.SummaryRequest{ModelURI: "gpt://folder/yandexgpt-lite/latest", Instruction: speechkit.SummaryInstruction("ru-RU")}
	mustSubmit(t, c, r)
	mustSubmit(t, c, uriRequest)

	reqs := srv.Requests()
	require.Equal(t, stt.SpeakerLabelingOptions_SPEAKER_LABELING_ENABLED, reqs[0].GetSpeakerLabeling().GetSpeakerLabeling())
	sum := reqs[0].GetSummarization()
	require.Equal(t, "gpt://folder/yandexgpt-lite/latest", sum.GetModelUri())
	require.Len(t, sum.GetProperties(), 1)
	require.Equal(t, speechkit.SummaryInstruction("ru-RU"), sum.GetProperties()[0].GetInstruction())
	require.Nil(t, sum.GetProperties()[0].GetResponseFormat(), "a plain text answer")

	require.Nil(t, reqs[1].GetSpeakerLabeling())
	require.Nil(t, reqs[1].GetSummarization())
}

func TestSubmitRefusesASummaryWithoutAModel(t *testing.T) {
	srv := speechkittest.Start(t)
	c := mustClient(t, srv.Config())
	r := uriRequest
	r.Summary = &speechkit.SummaryRequest{Instruction: "x"}
	_, err := c.Submit(context.Background(), r)
	requireErr(t, err, errs.Invalid, speechkit.CodeNoSummaryModel)
	require.Zero(t, srv.RecognizeCalls())
}

// The summarization message becomes the transcript's summary, with the
// model's token usage; empty responses are no summary.
func TestResultReadsTheSummary(t *testing.T) {
	utts := speechkittest.DefaultPlan().Utterances
	got, err := resultOf(t, speechkittest.Plan{Responses: append(speechkittest.Messages(utts),
		&stt.StreamingResponse{Event: &stt.StreamingResponse_Summarization{Summarization: &stt.Summarization{
			Results:      []*stt.SummarizationPropertyResult{{Response: " Первое. "}, {Response: ""}, {Response: "Второе."}},
			ContentUsage: &stt.ContentUsage{InputTextTokens: 150, CompletionTokens: 80, TotalTokens: 230},
		}}})})
	require.NoError(t, err)
	require.Len(t, got.Utterances, 1)
	require.Equal(t, &transcript.Summary{Text: "Первое.\n\nВторое.",
		Usage: transcript.SummaryUsage{InputTextTokens: 150, CompletionTokens: 80, TotalTokens: 230}}, got.Summary)

	got, err = resultOf(t, speechkittest.Plan{Responses: append(speechkittest.Messages(utts),
		&stt.StreamingResponse{Event: &stt.StreamingResponse_Summarization{Summarization: &stt.Summarization{
			Results: []*stt.SummarizationPropertyResult{{Response: "  "}},
		}}})})
	require.NoError(t, err)
	require.Nil(t, got.Summary, "an empty response is no summary")

	got, err = resultOf(t, speechkittest.Plan{Utterances: utts})
	require.NoError(t, err)
	require.Nil(t, got.Summary)
}

// With speaker labeling the speaker arrives as the channel tag: the
// fake's answer to a labelling request has two, on tags 0 and 1.
func TestResultOfALabelledRecognitionKeepsTheTags(t *testing.T) {
	srv := speechkittest.Start(t)
	c := mustClient(t, srv.Config())
	r := uriRequest
	r.Speakers = true
	id := mustSubmit(t, c, r)
	_, err := c.Check(context.Background(), id)
	require.NoError(t, err)
	got, err := c.Result(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, got.Utterances, 2)
	require.Equal(t, 0, got.Utterances[0].Channel)
	require.Equal(t, 1, got.Utterances[1].Channel)
}

// Every recognition language has an instruction in its own language, and
// docs/settings.md lists each of them.
func TestEveryLanguageHasASummaryInstructionInTheDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/settings.md")
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, code := range []string{"auto", "de-DE", "en-US", "es-ES", "fi-FI", "fr-FR", "he-HE", "it-IT",
		"kk-KZ", "nl-NL", "pl-PL", "pt-PT", "ru-RU", "sv-SE", "tr-TR", "uz-UZ"} {
		require.True(t, speechkit.ValidLanguage(code))
		s := speechkit.SummaryInstruction(code)
		require.NotEmpty(t, s, code)
		require.Equal(t, s, speechkit.SummaryInstruction(strings.ToLower(code)), "case does not matter")
		require.False(t, seen[s], "%s has its own instruction", code)
		seen[s] = true
		require.Contains(t, string(doc), "| `"+code+"` | "+s+" |", "docs/settings.md lists the instruction for %s", code)
	}
	require.Equal(t, speechkit.SummaryInstruction(speechkit.DefaultLanguage), speechkit.SummaryInstruction(""))
}
