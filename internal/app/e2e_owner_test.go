package app_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/app"
	"transcriber/internal/job"
	"transcriber/internal/telegram/telegramtest"
)

const owner = 9001

// ownerStack is a bot stack with counters whose owner is owner.
func ownerStack(t *testing.T) *botStack {
	return newBotStackWith(t, nil, func(c *app.Config) { c.Telegram.OwnerID = owner })
}

// sentTo is the texts the bot sent to chat.
func (b *botStack) sentTo(chat int64) []string {
	var out []string
	for _, c := range b.tg.Calls("sendMessage") {
		if c.Params["chat_id"] == itoa(int(chat)) {
			out = append(out, c.Params["text"])
		}
	}
	return out
}

// dead makes a job that ended dead with code.
func (b *botStack) dead(code string) job.Job {
	b.t.Helper()
	j, err := b.store.Create(b.ctx, job.Draft{Source: job.SourceAPI, OwnerID: "o", Filename: "a.mp3", SizeBytes: 10})
	require.NoError(b.t, err)
	c, err := b.store.Claim(b.ctx, j.ID, job.Ingest)
	require.NoError(b.t, err)
	c.State, c.ErrorCode, c.ErrorMessage = job.Dead, code, "gone"
	j, err = b.store.Save(b.ctx, c, job.Next{})
	require.NoError(b.t, err)
	return j
}

// /status answers the owner, in a private chat, with the service's state;
// anyone else, and the owner in a group, gets the unknown-command answer
// or nothing.
func TestStatusAnswersTheOwnerOnly(t *testing.T) {
	b := ownerStack(t)
	b.dead("speechkit_unavailable")

	require.Equal(t, http.StatusOK, b.webhook(telegramtest.Text(1, owner, owner, 10, "private", "/status"), webhookSecret))
	got := b.sentTo(owner)
	require.Len(t, got, 1)
	require.Contains(t, got[0], "24 h: 0 done, 0 failed, 1 dead.")
	require.Contains(t, got[0], "speechkit_unavailable")

	require.Equal(t, http.StatusOK, b.webhook(telegramtest.Text(2, 501, 501, 11, "private", "/status"), webhookSecret))
	got = b.sentTo(501)
	require.Len(t, got, 1)
	require.Contains(t, got[0], "I don't know that command")

	require.Equal(t, http.StatusOK, b.webhook(telegramtest.Text(3, owner, -100, 12, "group", "/status"), webhookSecret))
	require.Empty(t, b.sentTo(-100), "nothing in a group, not even to the owner")
}

// A job that ended dead makes one alert to the owner with its code and
// id; a second one within the hour makes none; the next hour tells of
// it.
func TestTheOwnerHearsOfADeadJobOnceAnHour(t *testing.T) {
	b := ownerStack(t)
	b.clk.Set(b.clk.Now().Truncate(time.Hour).Add(time.Minute))
	first := b.dead("speechkit_unavailable")
	b.poll()
	alerts := b.sentTo(owner)
	require.Len(t, alerts, 1)
	require.Contains(t, alerts[0], first.ID)
	require.Contains(t, alerts[0], "speechkit_unavailable")

	b.clk.Advance(time.Minute)
	second := b.dead("storage_unavailable")
	for range 3 { // :18, :34 and :50: three more checks within the hour
		b.clk.Advance(16 * time.Minute)
		b.poll()
	}
	require.Len(t, b.sentTo(owner), 1, "none for a second dead job within the hour")

	b.clk.Set(b.clk.Now().Truncate(time.Hour).Add(time.Hour + time.Minute))
	b.poll()
	alerts = b.sentTo(owner)
	require.Len(t, alerts, 2, "the next hour tells of it")
	require.True(t, strings.Contains(alerts[1], second.ID), "%s", alerts[1])
}

// Without an owner no alert is sent and /status is unknown.
func TestNoOwnerNoAlerts(t *testing.T) {
	b := newBotStack(t)
	b.dead("speechkit_unavailable")
	b.poll()
	require.Empty(t, b.tg.Calls("sendMessage"))
	require.Equal(t, http.StatusOK, b.webhook(telegramtest.Text(1, owner, owner, 10, "private", "/status"), webhookSecret))
	require.Contains(t, b.sentTo(owner)[0], "I don't know that command")
}
