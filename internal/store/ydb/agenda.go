package ydb

import (
	"context"
	"fmt"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"transcriber/internal/job"
	"transcriber/internal/outbox"
)

// Agenda tells the timer when its earliest work is due (app.Agenda): one
// row of each due index in one read-only transaction.
type Agenda struct{ db *DB }

func NewAgenda(db *DB) *Agenda { return &Agenda{db: db} }

// NextWork counts a leased outbox entry from its next_at: too early,
// never too late.
func (a *Agenda) NextWork(ctx context.Context, states []job.State) (time.Time, bool, error) {
	var e earliest
	err := a.db.read(ctx, func(ctx context.Context, tx query.TxActor) error {
		e = earliest{}
		err := e.jobs(ctx, a.db, tx, states)
		for _, k := range []outbox.Kind{outbox.Telegram, outbox.Callback} {
			if err == nil {
				err = e.first(ctx, a.db, tx, selectNextEntry, "next_at", nextEntryParams(k))
			}
		}
		return err
	})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next due work: %w", err)
	}
	return e.at, e.found, nil
}
