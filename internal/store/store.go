// Package store is the set of stores of one database: SQLite
// (sqlite.OpenSet: the local stack, the tests) or YDB (ydb.OpenSet: the
// functions), opened in one place and handed whole to what runs on it.
package store

import (
	"context"
	"time"

	"transcriber/internal/apitoken"
	"transcriber/internal/botstate"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/quota"
	"transcriber/internal/speechkit"
)

// Set is the stores of one database, made by NewSet.
type Set struct {
	Jobs     job.Store
	Tokens   apitoken.Store
	Bot      botstate.Store
	Counters quota.Counters
	Outbox   outbox.Store
	// Agenda nil has each part of the timer's call read for itself.
	Agenda Agenda

	close  func() error
	spread bool
}

// Agenda tells when the timer's earliest work is due: a job in one of
// states or a pending outbox entry. False when
// there is none.
type Agenda interface {
	NextWork(ctx context.Context, states []job.State) (time.Time, bool, error)
}

// NewSet returns s with closer as its Close (nil: nothing) and its hot
// counters (the admission's request window, the synchronous quota's second)
// spread over quota.DefaultShards rows, so instances reserving at once do
// not abort each other (docs/database.md, "Hot rows"). It is the one place
// they are spread: a spread counter must only be used spread, so all users
// of the database take them from a Set.
func NewSet(s Set, closer func() error) Set {
	s.Counters = quota.Spread(s.Counters, quota.DefaultShards,
		[]string{admission.RequestsKey, speechkit.SyncQuotaKey})
	s.close, s.spread = closer, true
	return s
}

// Made tells whether s came from NewSet.
func (s Set) Made() bool { return s.spread }

func (s Set) Close() error {
	if s.close == nil {
		return nil
	}
	return s.close()
}
