package telegram_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/telegram"
	"transcriber/internal/telegram/telegramtest"
	"transcriber/internal/telegram/tgconf"
)

// Telegram under load: a call applied, its answer slow or lost. The
// delivery's calls wait for the answer within the lease (its window); a
// document whose answer never came is not sent again, the status message
// becomes it.

// windowed is a harness whose deliveries' calls may take window: their
// lease less the time to record.
func windowed(t *testing.T, window time.Duration) *harness {
	return newHarness(t, func(c *tgconf.Config) { c.DeliveryLease = telegram.RecordTimeout + window })
}

// longText is a transcript too long for one message: it goes as a document.
var longText = strings.Repeat("abcd ", 1999) + "abcde"

// voiceJob posts a voice message, takes its job to done with text as the
// transcript, and returns it with the id of its status message.
func (h *harness) voiceJob(update, msg int64, text string) (job.Job, int64) {
	h.t.Helper()
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(h.t, http.StatusOK, h.post(telegramtest.Voice(update, user, msg, "f1", 5, "en")))
	var j job.Job
	for _, got := range h.jobsOf(user) {
		if got.TelegramMessageID == msg {
			j = got
		}
	}
	msgs := h.tg.Messages(user)
	return h.finish(j, text), msgs[len(msgs)-1].ID
}

// documents are the messages of the chat that hold a document.
func (h *harness) documents() []telegramtest.Message {
	var out []telegramtest.Message
	for _, m := range h.tg.Messages(user) {
		if m.Doc != nil {
			out = append(out, m)
		}
	}
	return out
}

// An answer later than a call's own bound (callTimeout, short here), but
// within the delivery's window, is waited for: the document is sent once
// and the status message says where it is.
func TestASlowAnswerIsWaitedForNotSentAgain(t *testing.T) {
	h := windowed(t, 30*time.Second)
	telegram.SetCallTimeout(h.bot, 300*time.Millisecond)
	j, status := h.voiceJob(1, 10, longText)
	h.tg.AnswerAfter("sendDocument", 1500*time.Millisecond)
	require.NoError(t, h.bot.Finished(h.ctx, j))

	h.clk.Advance(time.Hour)
	n, err := h.bot.Sweep(h.ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing left to deliver")
	require.Len(t, h.tg.Calls("sendDocument"), 1)
	require.Len(t, h.documents(), 1)
	msgs := h.tg.Messages(user)
	require.Equal(t, status, msgs[0].ID)
	require.Contains(t, msgs[0].Text, "file below", "the status message is edited")
}

// A document whose answer never came (Telegram posted it and answered
// after the window) is not sent again: the next try edits the status
// message into the document, and later tries edit the same message. The
// chat shows the transcript at most twice, and no status left saying the
// job is under way.
func TestALostAnswerMakesTheStatusMessageTheDocument(t *testing.T) {
	h := windowed(t, time.Second)
	j, status := h.voiceJob(1, 10, longText)
	h.tg.AnswerAfter("sendDocument", telegramtest.Late)
	err := h.bot.Finished(h.ctx, j)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Len(t, h.documents(), 1, "Telegram posted it all the same")

	h.tg.AnswerAfter("editMessageMedia", telegramtest.Late) // and the edit's answer is lost too
	h.clk.Advance(time.Minute)
	_, err = h.bot.Sweep(h.ctx)
	require.NoError(t, err)
	h.clk.Advance(time.Hour)
	n, err := h.bot.Sweep(h.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.NoError(t, h.bot.Finished(h.ctx, j), "delivered: nothing more")

	require.Len(t, h.tg.Calls("sendDocument"), 1, "the document is not sent again")
	edits := h.tg.Calls("editMessageMedia")
	require.Len(t, edits, 2)
	for _, e := range edits {
		require.Equal(t, status, e.Int("message_id"))
	}
	docs := h.documents()
	require.Len(t, docs, 2)
	require.Equal(t, status, docs[0].ID, "the status message became the document")
	require.Equal(t, "transcript.txt", docs[0].DocName)
	require.Contains(t, string(docs[0].Doc), longText)
	require.True(t, strings.HasPrefix(docs[0].Caption, "abcd abcd"), "its caption is the transcript's first lines")
	require.Equal(t, docs[1].Doc, docs[0].Doc)
	require.Len(t, h.tg.Messages(user), 2, "no other message")
}

// With a summary to post, the status message made the document carries
// the summary as its caption, where it would have stood above the
// document.
func TestALostAnswerWithASummaryPutsTheSummaryInTheCaption(t *testing.T) {
	h := windowed(t, time.Second)
	h.tg.AddFile("f1", []byte("voice"))
	require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "en")))
	status := h.tg.Messages(user)[0].ID
	j := h.finishWith(h.jobsOf(user)[0], 30*60_000, summarized(strings.Repeat("слово ", 1000)))
	h.tg.AnswerAfter("sendDocument", telegramtest.Late)
	require.Error(t, h.bot.Finished(h.ctx, j))
	h.clk.Advance(time.Minute)
	n, err := h.bot.Sweep(h.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	docs := h.documents()
	require.Len(t, docs, 2)
	require.Equal(t, status, docs[0].ID)
	require.Equal(t, "Summary:\nОбсудили планы.", docs[0].Caption)
}

// Telegram refusing to make the status message a document (it cannot be
// edited into one, or was deleted) leaves the document to be sent as a
// message of its own: at least once, never lost.
func TestARefusedEditIntoADocumentSendsTheDocument(t *testing.T) {
	h := windowed(t, time.Second)
	j, _ := h.voiceJob(1, 10, longText)
	h.tg.AnswerAfter("sendDocument", telegramtest.Late)
	require.Error(t, h.bot.Finished(h.ctx, j))
	h.tg.Fail("editMessageMedia", telegramtest.Failure{Code: 400, Description: "Bad Request: there is no media in the message to edit"})
	h.clk.Advance(time.Minute)
	n, err := h.bot.Sweep(h.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Len(t, h.tg.Calls("editMessageMedia"), 1)
	require.Len(t, h.tg.Calls("sendDocument"), 2)
	require.Contains(t, h.tg.Messages(user)[0].Text, "file below")
}

// lossyOutbox loses the record of a sent result while drop is set, as a
// sender stopped between the send and its record would.
type lossyOutbox struct {
	outbox.Store
	mu   sync.Mutex
	drop bool
}

func (s *lossyOutbox) Finish(ctx context.Context, kind outbox.Kind, key string, o outbox.Outcome, now time.Time) (outbox.Entry, error) {
	s.mu.Lock()
	drop := s.drop
	s.mu.Unlock()
	if drop && strings.HasSuffix(key, "/result") && o.State == outbox.Delivered {
		return outbox.Entry{}, errors.New("the sender stopped")
	}
	return s.Store.Finish(ctx, kind, key, o, now)
}

// The mark that a document may have been posted is written before the
// send: a sender that stopped after it, before recording it, leaves the
// delivery to a next try that edits the status message, not one that
// sends the document again.
func TestASenderStoppedAfterTheSendLeavesAnEditNotASecondDocument(t *testing.T) {
	h := newHarness(t)
	box := &lossyOutbox{Store: h.box, drop: true}
	var err error
	h.bot, err = telegram.New(telegram.Deps{Jobs: h.jobs, State: h.state, Outbox: box, Objects: h.obj, Clock: h.clk, Log: testLog(t)},
		tgconf.Config{Token: telegramtest.Token, WebhookSecret: secret, APIURL: h.tg.URL, Allowed: tgconf.Allowed{Everyone: true}})
	require.NoError(t, err)
	h.server.Config.Handler = h.bot
	j, status := h.voiceJob(1, 10, longText)
	require.NoError(t, h.bot.Finished(h.ctx, j), "sent; its record lost")
	box.mu.Lock()
	box.drop = false
	box.mu.Unlock()

	h.clk.Advance(tgconf.DefaultDeliveryLease)
	n, err := h.bot.Sweep(h.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Len(t, h.tg.Calls("sendDocument"), 1)
	edits := h.tg.Calls("editMessageMedia")
	require.Len(t, edits, 1)
	require.Equal(t, status, edits[0].Int("message_id"))
}

// A delivery Telegram did not answer within its window ends the sweep:
// the others wait for the next pass instead of each holding the call as
// long.
func TestASweepStopsAtADeliveryTelegramDidNotAnswer(t *testing.T) {
	h := windowed(t, time.Second)
	h.voiceJob(1, 10, "first") // and Finished is not called: the sweep delivers
	h.voiceJob(2, 11, "second")
	h.clk.Advance(tgconf.DefaultResultCheck)
	h.tg.AnswerAfter("editMessageText", telegramtest.Late)
	n, err := h.bot.Sweep(h.ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Len(t, h.tg.Calls("editMessageText"), 1, "one call waited out its window; the other was left")

	n, err = h.bot.Sweep(h.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "the next pass takes the other")
	h.clk.Advance(time.Hour)
	n, err = h.bot.Sweep(h.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "and the first, whose edit was applied: editing it again is no new message")
	var texts []string
	for _, m := range h.tg.Messages(user) {
		texts = append(texts, m.Text)
	}
	require.ElementsMatch(t, []string{"first", "second"}, texts)
}
