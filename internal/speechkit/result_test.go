package speechkit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"transcriber/internal/errs"
	"transcriber/internal/speechkit"
	"transcriber/internal/speechkit/speechkittest"
	"transcriber/internal/transcript"
)

// resultOf submits one request with plan and reads its result.
func resultOf(t *testing.T, plan speechkittest.Plan) (transcript.Transcript, error) {
	t.Helper()
	srv := speechkittest.Start(t)
	srv.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan { return plan })
	c := mustClient(t, srv.Config())
	id := mustSubmit(t, c, uriRequest)
	done, err := c.Check(context.Background(), id)
	require.NoError(t, err)
	require.True(t, done)
	return c.Result(context.Background(), id)
}

func final(tag string, index int64, alt *stt.Alternative) *stt.StreamingResponse {
	return &stt.StreamingResponse{
		ChannelTag:   tag,
		AudioCursors: &stt.AudioCursors{FinalIndex: index, FinalTimeMs: alt.GetEndTimeMs()},
		Event:        &stt.StreamingResponse_Final{Final: &stt.AlternativeUpdate{Alternatives: []*stt.Alternative{alt}}},
	}
}

func refinement(tag string, index int64, text string) *stt.StreamingResponse {
	return &stt.StreamingResponse{
		ChannelTag: tag,
		Event: &stt.StreamingResponse_FinalRefinement{FinalRefinement: &stt.FinalRefinement{
			FinalIndex: index,
			Type: &stt.FinalRefinement_NormalizedText{NormalizedText: &stt.AlternativeUpdate{
				Alternatives: []*stt.Alternative{{Text: text}},
			}},
		}},
	}
}

func TestResult(t *testing.T) {
	t.Run("the default plan gives one utterance with words and normalized text", func(t *testing.T) {
		got, err := resultOf(t, speechkittest.DefaultPlan())

		require.NoError(t, err)
		require.Equal(t, transcript.Transcript{
			DurationMs: 1200,
			Utterances: speechkittest.DefaultPlan().Utterances,
		}, got)
	})

	t.Run("two channels are matched by channel and final index and sorted by start", func(t *testing.T) {
		w := func(text string, start, end int64) *stt.Word {
			return &stt.Word{Text: text, StartTimeMs: start, EndTimeMs: end}
		}
		plan := speechkittest.Plan{Responses: []*stt.StreamingResponse{
			{ChannelTag: "0", Event: &stt.StreamingResponse_StatusCode{StatusCode: &stt.StatusCode{CodeType: stt.CodeType_WORKING}}},
			final("0", 0, &stt.Alternative{Text: "добрый день", StartTimeMs: 0, EndTimeMs: 1500,
				Words: []*stt.Word{w("добрый", 100, 600), w("день", 700, 1400)}}),
			final("1", 0, &stt.Alternative{Text: "здравствуйте", StartTimeMs: 1600, EndTimeMs: 2600,
				Words: []*stt.Word{w("здравствуйте", 1700, 2500)}}),
			// refinements out of order, channel 1 first: matched by key, not position
			refinement("1", 0, "Здравствуйте!"),
			refinement("0", 0, "Добрый день."),
			final("0", 1, &stt.Alternative{Text: "у вас двадцать пять минут", StartTimeMs: 1600, EndTimeMs: 4000}),
			refinement("0", 1, "У вас 25 минут."),
			final("1", 1, &stt.Alternative{Text: "спасибо", StartTimeMs: 4200, EndTimeMs: 4700}),
			{ChannelTag: "1", AudioCursors: &stt.AudioCursors{PartialTimeMs: 5100},
				Event: &stt.StreamingResponse_EouUpdate{EouUpdate: &stt.EouUpdate{TimeMs: 4700}}},
		}}

		got, err := resultOf(t, plan)

		require.NoError(t, err)
		require.Equal(t, int64(5100), got.DurationMs, "the processed-audio cursor outlasts the last word")
		require.Equal(t, []transcript.Utterance{
			{Channel: 0, StartMs: 0, EndMs: 1500, Text: "добрый день", Normal: "Добрый день.",
				Words: []transcript.Word{{Text: "добрый", StartMs: 100, EndMs: 600}, {Text: "день", StartMs: 700, EndMs: 1400}}},
			{Channel: 0, StartMs: 1600, EndMs: 4000, Text: "у вас двадцать пять минут", Normal: "У вас 25 минут."},
			{Channel: 1, StartMs: 1600, EndMs: 2600, Text: "здравствуйте", Normal: "Здравствуйте!",
				Words: []transcript.Word{{Text: "здравствуйте", StartMs: 1700, EndMs: 2500}}},
			{Channel: 1, StartMs: 4200, EndMs: 4700, Text: "спасибо", Normal: "спасибо"},
		}, got.Utterances)
	})

	t.Run("a repeated final index pairs a refinement with the latest final", func(t *testing.T) {
		plan := speechkittest.Plan{Responses: []*stt.StreamingResponse{
			final("0", 0, &stt.Alternative{Text: "раз", StartTimeMs: 0, EndTimeMs: 500}),
			refinement("0", 0, "Раз."),
			final("0", 0, &stt.Alternative{Text: "два", StartTimeMs: 600, EndTimeMs: 900}),
			refinement("0", 0, "Два."),
		}}

		got, err := resultOf(t, plan)

		require.NoError(t, err)
		require.Len(t, got.Utterances, 2)
		require.Equal(t, "Раз.", got.Utterances[0].Normal)
		require.Equal(t, "Два.", got.Utterances[1].Normal)
	})

	t.Run("utterances from the helper keep their channels", func(t *testing.T) {
		utts := []transcript.Utterance{
			{Channel: 1, StartMs: 500, EndMs: 900, Text: "второй", Normal: "Второй."},
			{Channel: 0, StartMs: 0, EndMs: 400, Text: "первый", Normal: "Первый."},
			{Channel: 0, StartMs: 500, EndMs: 800, Text: "третий"},
		}

		got, err := resultOf(t, speechkittest.Plan{Utterances: utts})

		require.NoError(t, err)
		require.Equal(t, []transcript.Utterance{
			{Channel: 0, StartMs: 0, EndMs: 400, Text: "первый", Normal: "Первый."},
			{Channel: 0, StartMs: 500, EndMs: 800, Text: "третий", Normal: "третий"},
			{Channel: 1, StartMs: 500, EndMs: 900, Text: "второй", Normal: "Второй."},
		}, got.Utterances)
		require.Equal(t, int64(900), got.DurationMs)
	})

	t.Run("no finals is an empty transcript, not an error", func(t *testing.T) {
		plan := speechkittest.Plan{Responses: []*stt.StreamingResponse{
			{ChannelTag: "0", AudioCursors: &stt.AudioCursors{PartialTimeMs: 3000, FinalTimeMs: 3000},
				Event: &stt.StreamingResponse_Final{Final: &stt.AlternativeUpdate{Alternatives: []*stt.Alternative{{}}}}},
		}}

		got, err := resultOf(t, plan)

		require.NoError(t, err)
		require.True(t, got.Empty())
		require.NotNil(t, got.Utterances)
		require.Empty(t, got.Utterances)
		require.Equal(t, int64(3000), got.DurationMs)
	})

	t.Run("nothing streamed at all is empty too", func(t *testing.T) {
		got, err := resultOf(t, speechkittest.Plan{})

		require.NoError(t, err)
		require.True(t, got.Empty())
		require.Zero(t, got.DurationMs)
	})

	t.Run("the detected language is reported", func(t *testing.T) {
		alt := func(text string, langs ...*stt.LanguageEstimation) *stt.Alternative {
			return &stt.Alternative{Text: text, EndTimeMs: 100, Languages: langs}
		}
		plan := speechkittest.Plan{Responses: []*stt.StreamingResponse{
			final("0", 0, alt("hello", &stt.LanguageEstimation{LanguageCode: "en-US", Probability: 0.9},
				&stt.LanguageEstimation{LanguageCode: "ru-RU", Probability: 0.1})),
			final("0", 1, alt("привет", &stt.LanguageEstimation{LanguageCode: "ru-RU", Probability: 0.7})),
			final("0", 2, alt("world", &stt.LanguageEstimation{LanguageCode: "en-US", Probability: 0.6})),
		}}

		got, err := resultOf(t, plan)

		require.NoError(t, err)
		require.Equal(t, "en-US", got.Language)
	})

	t.Run("an error in the middle of the stream is classified", func(t *testing.T) {
		plan := speechkittest.DefaultPlan()
		plan.ResultErr = status.Error(codes.Unavailable, "fake says stream broke")

		_, err := resultOf(t, plan)

		requireErr(t, err, errs.Unavailable, speechkit.CodeUnavailable)
	})

	t.Run("a result that is gone has expired", func(t *testing.T) {
		srv := speechkittest.Start(t)
		c := mustClient(t, srv.Config())

		_, err := c.Result(context.Background(), "nosuchoperation")

		requireErr(t, err, errs.Permanent, speechkit.CodeExpired)
	})
}
