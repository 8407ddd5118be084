package transcript_test

import (
	"encoding/json"
	"testing"

	"transcriber/internal/transcript"
	"transcriber/internal/transcript/transcripttest"
)

// FuzzRenderStored: whatever JSON a stored transcript holds (it is read
// back from storage and decoded as the API and the bot do), every format
// renders well formed (transcripttest.Check).
func FuzzRenderStored(f *testing.F) {
	for _, s := range []string{
		`{"duration_ms":5200,"language":"ru-RU","utterances":[{"channel":0,"start_ms":300,"end_ms":1800,"text":"привет мир","normalized":"Привет, мир!","words":[{"text":"привет","start_ms":300,"end_ms":900},{"text":"мир","start_ms":1000,"end_ms":1800}]}]}`,
		`{"utterances":[{"start_ms":-5,"end_ms":-9,"text":"a --> b\n\nc\r\u0000\u007f\u0085"}]}`,
		`{"utterances":[{"start_ms":9223372036854775807,"end_ms":-9223372036854775808,"text":"x"}]}`,
		`{"utterances":[{"channel":1,"start_ms":0,"end_ms":30000,"text":"a b c","words":[{"text":"c","start_ms":20000,"end_ms":29000},{"text":"\n","start_ms":0,"end_ms":1},{"text":"a<b&","start_ms":5,"end_ms":9000}]},{"channel":0,"start_ms":10,"end_ms":20,"text":"<i>&amp;</i>"}]}`,
		"{\"utterances\":[{\"text\":\"\xff\xfe\u2028\"}]}",
		`{"utterances":[{"speaker":1,"start_ms":0,"end_ms":900,"text":"a <v x>"},{"speaker":2,"channel":1,"start_ms":5,"end_ms":20,"text":"--> &"}],"summary":{"text":"s"}}`,
		`{}`, `null`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, stored []byte) {
		var tr transcript.Transcript
		if json.Unmarshal(stored, &tr) != nil {
			return
		}
		if err := transcripttest.RenderAll(tr); err != nil {
			t.Fatal(err)
		}
	})
}
