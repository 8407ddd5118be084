package ydb

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"transcriber/internal/apitoken"
	"transcriber/internal/botstate"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
)

// recordingRunner stands for the driver's query client: it records the
// options of each transaction it is asked to run, and runs none.
type recordingRunner struct{ calls [][]query.DoTxOption }

var errNotRun = errors.New("recordingRunner runs no transaction")

func (r *recordingRunner) DoTx(_ context.Context, _ query.TxOperation, opts ...query.DoTxOption) error {
	r.calls = append(r.calls, opts)
	return errNotRun
}

// hasOption reports whether opts hold want (compared as values: the SDK's
// options are plain values and slices of them).
func hasOption(opts []query.DoTxOption, want query.DoTxOption) bool {
	for _, o := range opts {
		if reflect.DeepEqual(o, want) {
			return true
		}
	}
	return false
}

var (
	idempotent = query.WithIdempotent()
	snapshot   = query.WithTxSettings(query.TxSettings(query.WithSnapshotReadOnly()))
)

// storeCalls are a call of every exported method of every store type of
// the package, with arguments each accepts, split into writes and reads.
func storeCalls(db *DB) (writes, reads map[string]func(context.Context) error) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	const id = "01JD0M3Y8K9Q2R5T7V4W6X8Z0A"
	jobs, tokens, bot, box, counters, agenda := NewJobStore(db), NewTokenStore(db), NewBotState(db), NewOutbox(db), NewCounters(db), NewAgenda(db)
	api := job.Draft{Source: job.SourceAPI, OwnerID: "owner", UploadWindow: time.Hour}
	keyed := api
	keyed.IdempotencyKey = "k"
	tok, _, _ := apitoken.New("ci", now)
	e := outbox.Entry{Kind: outbox.Telegram, Key: "1/2/status"}
	lease := time.Minute
	ignore := func(_ any, err error) error { return err }
	ignore2 := func(_, _ any, err error) error { return err }
	writes = map[string]func(context.Context) error{
		"JobStore.Create":     func(ctx context.Context) error { return ignore(jobs.Create(ctx, api)) },
		"JobStore.CreateOnce": func(ctx context.Context) error { return ignore2(jobs.CreateOnce(ctx, keyed)) },
		"JobStore.CreateForMessage": func(ctx context.Context) error {
			return ignore2(jobs.CreateForMessage(ctx, job.Draft{Source: job.SourceTelegram, TelegramChatID: 1, TelegramMessageID: 2}))
		},
		"JobStore.Delete": func(ctx context.Context) error { return ignore(jobs.Delete(ctx, id)) },
		"JobStore.Claim":  func(ctx context.Context) error { return ignore(jobs.Claim(ctx, id, job.Ingest)) },
		"JobStore.Save": func(ctx context.Context) error {
			return ignore(jobs.Save(ctx, job.Job{ID: id, ClaimID: id}, job.Next{}))
		},
		"JobStore.Release": func(ctx context.Context) error {
			return ignore(jobs.Release(ctx, job.Claim{JobID: id, ID: id}, 0, job.Failure{}))
		},
		"JobStore.Renew": func(ctx context.Context) error {
			return ignore(jobs.Renew(ctx, job.Claim{JobID: id, ID: id}, job.Ingest))
		},
		"JobStore.ClaimDue": func(ctx context.Context) error { return ignore(jobs.ClaimDue(ctx, job.Ingest, 10)) },

		"TokenStore.Create": func(ctx context.Context) error { return tokens.Create(ctx, tok) },
		"TokenStore.Revoke": func(ctx context.Context) error { return ignore(tokens.Revoke(ctx, tok.ID, now)) },

		"BotState.UpdateChat": func(ctx context.Context) error { return ignore(bot.UpdateChat(ctx, 1, now, func(*botstate.Chat) {})) },
		"BotState.ForgetChat": func(ctx context.Context) error { return bot.ForgetChat(ctx, 1) },

		"Outbox.Put":   func(ctx context.Context) error { return ignore2(box.Put(ctx, e, now, now)) },
		"Outbox.Begin": func(ctx context.Context) error { return ignore2(box.Begin(ctx, e, now, lease)) },
		"Outbox.Finish": func(ctx context.Context) error {
			return ignore(box.Finish(ctx, e.Kind, e.Key, outbox.Outcome{State: outbox.Delivered}, now))
		},
		"Outbox.ClaimDue": func(ctx context.Context) error { return ignore(box.ClaimDue(ctx, e.Kind, now, lease, 10)) },

		"Counters.Reserve": func(ctx context.Context) error { return ignore2(counters.Reserve(ctx, "k", now, 1, 1)) },
		"Counters.Release": func(ctx context.Context) error { return counters.Release(ctx, "k", now, 1) },

		"schema.record": func(ctx context.Context) error { return ydbSchema{db: db}.record(ctx, 1, "") },
	}
	reads = map[string]func(context.Context) error{
		"JobStore.Get":        func(ctx context.Context) error { return ignore(jobs.Get(ctx, id)) },
		"JobStore.List":       func(ctx context.Context) error { return ignore(jobs.List(ctx, "owner", "", 10)) },
		"JobStore.NextDue":    func(ctx context.Context) error { return ignore2(jobs.NextDue(ctx, job.Ingest.From)) },
		"JobStore.Unfinished": func(ctx context.Context) error { return ignore(jobs.Unfinished(ctx, "tok:x", 10)) },
		"JobStore.Reusable":   func(ctx context.Context) error { return ignore(jobs.Reusable(ctx, "ab", time.Unix(0, 0))) },
		"JobStore.StateEntries": func(ctx context.Context) error {
			return ignore(jobs.StateEntries(ctx, job.Created, time.Time{}, 10))
		},
		"JobStore.LatestInState": func(ctx context.Context) error {
			return ignore(jobs.LatestInState(ctx, job.Dead, now, 10))
		},
		"Outbox.InState": func(ctx context.Context) error {
			return ignore(box.InState(ctx, outbox.Callback, outbox.Failed, now, 10))
		},
		"TokenStore.ByHash": func(ctx context.Context) error { return ignore(tokens.ByHash(ctx, tok.Hash)) },
		"TokenStore.List":   func(ctx context.Context) error { return ignore(tokens.List(ctx)) },
		"BotState.Chat":     func(ctx context.Context) error { return ignore(bot.Chat(ctx, 1)) },
		"Outbox.Get":        func(ctx context.Context) error { return ignore(box.Get(ctx, e.Kind, e.Key)) },
		"Counters.Used":     func(ctx context.Context) error { return ignore(counters.Used(ctx, "k", now)) },
		"Counters.UsedMany": func(ctx context.Context) error { return ignore(counters.UsedMany(ctx, []string{"k"}, now)) },
		"Agenda.NextWork":   func(ctx context.Context) error { return ignore2(agenda.NextWork(ctx, job.Ingest.From)) },
	}
	return writes, reads
}

// Every write runs in a read-write transaction marked idempotent, so the
// SDK runs it again after a transport error (ydb-go-sdk v3.127.0,
// retry/mode.go: a conditionally retryable error is retried only for an
// idempotent operation): the first write after an instance slept, on a
// connection that died meanwhile, is not lost. What makes each safe to
// run twice is tested where it can run (internal/job, internal/quota, and
// the embedded store's model of the retry, sqlite.LoseAnswers). Reads are
// snapshot read-only, idempotent as before.
func TestEveryWriteIsMarkedIdempotent(t *testing.T) {
	ctx := context.Background()
	r := &recordingRunner{}
	db := &DB{txs: r, clock: clocktest.NewFake(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))}
	writes, reads := storeCalls(db)

	for _, name := range sortedNames(writes) {
		r.calls = nil
		err := writes[name](ctx)
		require.ErrorIs(t, err, errNotRun, "%s reaches its transaction", name)
		require.Len(t, r.calls, 1, name)
		require.True(t, hasOption(r.calls[0], idempotent), "%s is marked idempotent", name)
		require.False(t, hasOption(r.calls[0], snapshot), "%s writes: not a snapshot", name)
	}
	for _, name := range sortedNames(reads) {
		r.calls = nil
		err := reads[name](ctx)
		require.ErrorIs(t, err, errNotRun, "%s reaches its transaction", name)
		require.Len(t, r.calls, 1, name)
		require.True(t, hasOption(r.calls[0], snapshot), "%s reads in a snapshot", name)
	}

	t.Run("every method of every store is listed, so a new write is checked", func(t *testing.T) {
		for _, v := range []any{&JobStore{}, &TokenStore{}, &BotState{}, &Outbox{}, &Counters{}, &Agenda{}} {
			typ := reflect.TypeOf(v)
			for i := 0; i < typ.NumMethod(); i++ {
				name := typ.Elem().Name() + "." + typ.Method(i).Name
				_, w := writes[name]
				_, rd := reads[name]
				require.True(t, w || rd, "%s is neither a write nor a read listed in storeCalls: list it, and make a write safe to run twice", name)
			}
		}
	})

	t.Run("the check can fail", func(t *testing.T) {
		r.calls = nil
		require.ErrorIs(t, db.txs.DoTx(ctx, nil), errNotRun)
		require.False(t, hasOption(r.calls[0], idempotent), "a transaction without the option is seen as such")
	})
}

func sortedNames(m map[string]func(context.Context) error) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
