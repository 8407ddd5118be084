package ydb

import (
	"context"
	"fmt"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"transcriber/internal/botstate"
	"transcriber/internal/callback"
	"transcriber/internal/job"
)

// Agenda tells the timer when its earliest work is due (app.Agenda): the
// first entry of each live state's range in jobs_due, of the pending
// range of telegram_deliveries_due and of callbacks_due, all in one
// read-only transaction. A minute with nothing to do is this one call.
type Agenda struct{ db *DB }

// NewAgenda returns the agenda of the tables in db.
func NewAgenda(db *DB) *Agenda { return &Agenda{db: db} }

// NextWork returns the earliest time a job in states, a pending Telegram
// delivery or a pending callback is due; false when there is none. A
// delivery or callback whose lease runs on counts from its next_at: too
// early, never too late.
func (a *Agenda) NextWork(ctx context.Context, states []job.State) (time.Time, bool, error) {
	var e earliest
	err := a.db.read(ctx, func(ctx context.Context, tx query.TxActor) error {
		e = earliest{}
		if err := e.jobs(ctx, a.db, tx, states); err != nil {
			return err
		}
		if err := e.first(ctx, a.db, tx, selectNextDelivery, "next_at", nextDueParams(utf8(string(botstate.Pending)))); err != nil {
			return err
		}
		return e.first(ctx, a.db, tx, selectNextCallback, "next_at", nextDueParams(utf8(string(callback.Pending))))
	})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next due work: %w", err)
	}
	return e.at, e.found, nil
}
