package speechkit

import (
	"testing"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"
)

// Words out of order: the utterance ends with the word that ends last, not
// with the last word, and the transcript's duration covers it.
func TestUtteranceEndCoversEveryWord(t *testing.T) {
	alt := &stt.Alternative{Text: "раз два", StartTimeMs: 0, EndTimeMs: 700, Words: []*stt.Word{
		{Text: "раз", StartTimeMs: 0, EndTimeMs: 9000},
		{Text: "два", StartTimeMs: 100, EndTimeMs: 500},
	}}
	a := newAssembler()
	a.add(&stt.StreamingResponse{ChannelTag: "0",
		Event: &stt.StreamingResponse_Final{Final: &stt.AlternativeUpdate{Alternatives: []*stt.Alternative{alt}}}})
	tr := a.transcript()
	require.Len(t, tr.Utterances, 1)
	require.Equal(t, int64(9000), tr.Utterances[0].EndMs)
	require.Equal(t, int64(9000), tr.DurationMs)
}
