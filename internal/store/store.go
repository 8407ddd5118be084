// Package store is the set of stores the service keeps its state in, one
// database for all of them: the embedded one (sqlite.OpenSet, the local
// stack and the tests) or YDB (ydb.OpenSet, the functions). A Set is
// opened in one place per database and handed whole to what runs on it
// (app.Options.Stores, the local stack, the CLI).
package store

import (
	"context"
	"time"

	"transcriber/internal/apitoken"
	"transcriber/internal/botstate"
	"transcriber/internal/callback"
	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/quota"
	"transcriber/internal/speechkit"
)

// Set is the stores of one database. Make it with NewSet (the backends'
// OpenSet do): its Counters are then spread, and Close closes the database.
type Set struct {
	Jobs      job.Store
	Tokens    apitoken.Store
	Bot       botstate.Store
	Counters  quota.Counters
	Callbacks callback.Store
	// Agenda tells when the timer's earliest work is due, in one read;
	// nil has each part of the timer's call read for itself.
	Agenda Agenda

	close  func() error
	spread bool
}

// Agenda tells when the timer's earliest work is due: a job in one of
// states, a pending Telegram delivery or a pending callback. False when
// there is none.
type Agenda interface {
	NextWork(ctx context.Context, states []job.State) (time.Time, bool, error)
}

// NewSet returns s with its counters spread and closer as its Close (nil:
// nothing to close). It is the one place the counters are spread: those
// every instance changes (the admission's request window, the synchronous
// quota's second) over quota.DefaultShards rows each, so instances
// reserving at once do not abort each other on one row (docs/database.md,
// "Hot rows"). A spread
// counter is read and changed only through spread counters, so everything
// on the database (the App, transcriber status) takes them from a Set.
func NewSet(s Set, closer func() error) Set {
	s.Counters = quota.Spread(s.Counters, quota.DefaultShards,
		[]string{admission.RequestsKey, speechkit.SyncQuotaKey})
	s.close, s.spread = closer, true
	return s
}

// Made tells whether s came from NewSet: its counters are spread.
func (s Set) Made() bool { return s.spread }

// Close closes the database of the set.
func (s Set) Close() error {
	if s.close == nil {
		return nil
	}
	return s.close()
}
