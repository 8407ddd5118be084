package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/botstate"
	"transcriber/internal/botstate/botstatetest"
	"transcriber/internal/store/sqlite"
)

// The bot's expiry (ExpireDeliveries, with the retention's cut) deletes
// the Telegram deliveries last written before the cut, as YDB's TTL does,
// and keeps the rest: nothing of the bot's is kept forever.
func TestExpireDeliveriesDeletesOldOnes(t *testing.T) {
	ctx := context.Background()
	db := openBotDB(t)
	bot := sqlite.NewBotState(db)
	t0 := botstatetest.Base
	old := botstate.Key{ChatID: 1, MessageID: 1, Part: "refusal"}
	settled := botstate.Key{ChatID: 1, MessageID: 2, Part: "result"}
	recent := botstate.Key{ChatID: 1, MessageID: 3, Part: "result"}
	_, _, err := bot.Begin(ctx, old, "", t0, time.Minute)
	require.NoError(t, err)
	_, _, err = bot.Begin(ctx, settled, "", t0, time.Minute)
	require.NoError(t, err)
	_, err = bot.Finish(ctx, settled, botstate.Outcome{State: botstate.Sent, SentID: 7}, t0.Add(48*time.Hour))
	require.NoError(t, err)
	_, _, err = bot.Begin(ctx, recent, "", t0.Add(47*time.Hour), time.Minute)
	require.NoError(t, err)

	cut := t0.Add(24 * time.Hour)
	n, err := bot.ExpireDeliveries(ctx, cut, 10)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	_, err = bot.Get(ctx, old)
	require.ErrorIs(t, err, botstate.ErrNotFound, "last written before the cut")
	for _, k := range []botstate.Key{settled, recent} {
		_, err := bot.Get(ctx, k)
		require.NoError(t, err, "%+v was written after the cut", k)
	}
}

// A sweep deletes at most its limit of deliveries; the next takes the
// rest.
func TestExpireDeliveriesInBatches(t *testing.T) {
	ctx := context.Background()
	db := openBotDB(t)
	bot := sqlite.NewBotState(db)
	t0 := botstatetest.Base
	for i := range 3 {
		_, _, err := bot.Begin(ctx, botstate.Key{ChatID: 1, MessageID: int64(i + 1), Part: "reply"}, "", t0, time.Minute)
		require.NoError(t, err)
	}
	left := func() int {
		n := 0
		for i := range 3 {
			if _, err := bot.Get(ctx, botstate.Key{ChatID: 1, MessageID: int64(i + 1), Part: "reply"}); err == nil {
				n++
			}
		}
		return n
	}
	_, err := bot.ExpireDeliveries(ctx, t0.Add(time.Hour), 2)
	require.NoError(t, err)
	require.Equal(t, 1, left())
	_, err = bot.ExpireDeliveries(ctx, t0.Add(time.Hour), 2)
	require.NoError(t, err)
	require.Equal(t, 0, left())
}
