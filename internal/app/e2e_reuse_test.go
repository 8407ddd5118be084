package app_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/app"
	"transcriber/internal/job"
	"transcriber/internal/telegram/telegramtest"
)

// reusedJob is a job as GET /v1/jobs/{id} shows what reuse adds.
type reusedJob struct {
	apiJob
	ReusedFrom    string            `json:"reused_from"`
	BilledSeconds *int64            `json:"billed_seconds"`
	CostRub       *float64          `json:"cost_rub"`
	Transcript    map[string]string `json:"transcript"`
}

func (c *client) reused(id string) reusedJob {
	c.t.Helper()
	var v reusedJob
	status, body, _ := c.call(http.MethodGet, "/v1/jobs/"+id, "", &v)
	require.Equal(c.t, http.StatusOK, status, body)
	require.Equal(c.t, "done", v.State, body)
	return v
}

func (c *client) text(path string) string {
	c.t.Helper()
	status, body, _ := c.call(http.MethodGet, path, "", nil)
	require.Equal(c.t, http.StatusOK, status, body)
	return body
}

// The same file twice with one token: the second job is done at once,
// with no request to SpeechKit, billed 0, its transcript a copy of the
// first's that outlives the first's deletion; with another token it is
// recognized anew; with "reuse": false too; and a deleted job lends
// nothing.
func TestTheSameFileTwiceIsRecognizedOnce(t *testing.T) {
	st := newStack(t)
	c, other := st.client(), st.client()
	note := shortVoice(t, 2_000)

	first := st.send(c, note, "")
	st.poll()
	require.Equal(t, job.Done, st.job(first).State)
	require.Equal(t, 1, st.sk.RecognizeCalls())

	second := st.send(c, note, "")
	v := c.reused(second)
	require.Equal(t, first, v.ReusedFrom)
	require.NotNil(t, v.BilledSeconds, "billed_seconds is said, as 0")
	require.Zero(t, *v.BilledSeconds)
	require.NotNil(t, v.CostRub)
	require.Zero(t, *v.CostRub)
	require.Equal(t, 1, st.sk.RecognizeCalls(), "no request to SpeechKit")
	require.Zero(t, st.sk.SyncCallCount())
	require.Zero(t, st.job(second).ReservedSeconds, "nothing reserved")
	want := c.text(c.reused(first).Transcript["json"])
	require.Equal(t, want, c.text(v.Transcript["json"]), "the same transcript")

	status, body, _ := c.call(http.MethodDelete, "/v1/jobs/"+first, "", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, want, c.text(v.Transcript["json"]), "a copy: it lives with the job that reused it")

	third := st.send(c, note, "")
	require.Equal(t, second, c.reused(third).ReusedFrom, "the first is deleted: the second's copy lends itself")
	status, body, _ = c.call(http.MethodDelete, "/v1/jobs/"+second, "", nil)
	require.Equal(t, http.StatusOK, status, body)
	status, body, _ = c.call(http.MethodDelete, "/v1/jobs/"+third, "", nil)
	require.Equal(t, http.StatusOK, status, body)
	again := st.send(c, note, "")
	st.poll()
	require.Empty(t, c.reused(again).ReusedFrom, "a deleted job is never a source")
	require.Equal(t, 2, st.sk.RecognizeCalls())

	fresh := st.send(c, note, `,"reuse":false`)
	st.poll()
	require.Empty(t, c.reused(fresh).ReusedFrom)
	require.Equal(t, 3, st.sk.RecognizeCalls(), `"reuse": false is recognized`)

	theirs := st.send(other, note, "")
	st.poll()
	require.Empty(t, other.reused(theirs).ReusedFrom, "another payer's file is recognized anew")
	require.Equal(t, 4, st.sk.RecognizeCalls())

	german := st.send(c, note, `,"language":"de-DE"`)
	st.poll()
	require.Empty(t, c.reused(german).ReusedFrom, "other options, another transcript")
	require.Equal(t, 5, st.sk.RecognizeCalls())
}

// REUSE_SCOPE=installation reuses across payers; off never reuses.
func TestReuseScope(t *testing.T) {
	for _, tc := range []struct {
		scope job.ReuseScope
		calls int
	}{{job.ReuseInstallation, 1}, {job.ReuseOff, 3}} {
		t.Run(string(tc.scope), func(t *testing.T) {
			st := newStack(t, func(c *app.Config) { c.Pipeline.ReuseScope, c.Telegram.ReuseScope = tc.scope, tc.scope })
			note := shortVoice(t, 2_000)
			a := st.client()
			st.send(a, note, "")
			st.poll()
			for range 2 {
				c := st.client()
				id := st.send(c, note, "")
				st.poll()
				require.Equal(t, tc.scope == job.ReuseInstallation, c.reused(id).ReusedFrom != "")
			}
			require.Equal(t, tc.calls, st.sk.RecognizeCalls())
		})
	}
}

// The same Telegram file twice in a chat: both messages are answered,
// with one download and one recognition; after /forget the file is
// recognized anew.
func TestTheSameTelegramFileTwiceInAChat(t *testing.T) {
	b := newBotStack(t)
	voice := voiceOf(t, 40) // past the synchronous door: recognized asynchronously
	b.tg.AddFile("same", voice)
	const chat = 801
	send := func(msg int64) {
		t.Helper()
		require.Equal(t, http.StatusOK, b.webhook(telegramtest.Voice(msg, chat, msg, "same", len(voice), "ru"), webhookSecret))
	}
	send(1)
	b.ingest(b.event())
	b.poll()
	require.Equal(t, 1, b.sk.RecognizeCalls())
	require.Len(t, b.tg.Calls("getFile"), 1)

	send(2)
	require.Empty(t, b.events, "not downloaded: nothing uploaded to storage")
	require.Len(t, b.tg.Calls("getFile"), 1, "one download")
	require.Equal(t, 1, b.sk.RecognizeCalls(), "one recognition")
	page, err := b.store.List(b.ctx, "tg:"+itoa(chat), "", 10)
	require.NoError(t, err)
	require.Len(t, page.Jobs, 2)
	for _, j := range page.Jobs {
		require.Equal(t, job.Done, j.State)
		if j.TelegramMessageID == 2 {
			require.NotEmpty(t, j.Features.ReusedFrom)
		}
	}
	require.Len(t, b.ended.of(page.Jobs[0].ID), 1)
	require.Len(t, b.ended.of(page.Jobs[1].ID), 1, "both answered")

	require.Equal(t, http.StatusOK, b.webhook(telegramtest.Text(3, chat, chat, 3, "private", "/forget"), webhookSecret))
	require.Equal(t, http.StatusOK, b.webhook(telegramtest.Button(4, chat, chat, 2000, "forget:yes:"+itoa(chat)), webhookSecret))
	send(5)
	if len(b.events) > 0 {
		b.ingest(b.event())
		b.poll()
	}
	require.Len(t, b.tg.Calls("getFile"), 2, "after /forget the file is fetched again")
	require.Equal(t, 2, b.sk.RecognizeCalls())
}
