// Package storecheck runs the store calls of a job's life against a real
// database, checks each answer, and measures the request units each call
// was billed where the backend reports them. It is the installation's
// store probe (transcriber selftest --store): the contract suites need
// thousands of schema operations, more than a serverless database allows
// in a day (docs/database.md, "Checking a real database").
package storecheck

import (
	"context"
	"errors"
	"fmt"
	"time"

	"transcriber/internal/clock"
	"transcriber/internal/ident"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/store"
)

// Meter returns ctx metered: read reports the request units billed for the
// calls made under it and whether the backend reported any.
type Meter func(ctx context.Context) (metered context.Context, read func() (units float64, reported bool))

// Call is one store call of the probe: its request units beside the
// estimate docs/database.md gives for it.
type Call struct {
	Name     string   `json:"name"`
	Units    *float64 `json:"ru"` // nil: the backend reported none
	Estimate string   `json:"estimate"`
}

// Result is what the probe found: the calls in order, and each answer that
// broke the store's contract.
type Result struct {
	Calls    []Call   `json:"calls"`
	Failures []string `json:"failures,omitempty"`
}

// Estimates are docs/database.md's per-call figures ("Cost in request
// units"), by the probe's call names.
var Estimates = map[string]string{
	"Create":                  "≈ 8",
	"Get":                     "≈ 1",
	"CreateOnce, new":         "≈ 11",
	"CreateOnce, made before": "≈ 2",
	"Claim":                   "≈ 8",
	"Claim, refused":          "≈ 1",
	"Renew":                   "≈ 8",
	"Save, keep":              "≈ 4",
	"Release":                 "≈ 8",
	"ClaimDue, one claimed":   "≈ 12",
	"ClaimDue, nothing due":   "≈ 3",
	"NextDue":                 "≈ 3",
	"Save, done":              "≈ 8",
	"Reusable":                "≈ 2",
	"List, 2 jobs":            "≈ 6",
	"Delete":                  "≈ 8",
	"Reserve":                 "≈ 3",
	"Reserve, refused":        "≈ 1",
	"Used":                    "≈ 1",
	"Used, spread counter":    "≈ 1–8",
	"Put":                     "≈ 5",
	"Put, recorded":           "≈ 1",
	"Begin":                   "≈ 3–7",
	"Begin, held":             "≈ 1",
	"Finish":                  "≈ 3–7",
	"ClaimDue (outbox)":       "≈ 3–7",
}

type probe struct {
	ctx   context.Context
	set   store.Set
	meter Meter
	clk   clock.Clock
	res   Result
}

// Run takes two jobs, a counter and an outbox entry, under fresh keys,
// through the calls of their life. A call that fails outright ends its
// part; a wrong answer is a failure and the probe goes on.
func Run(ctx context.Context, s store.Set, clk clock.Clock, meter Meter) Result {
	p := &probe{ctx: ctx, set: s, meter: meter, clk: clk}
	if err := p.jobs(); err != nil {
		p.fail("%v", err)
	}
	if err := p.counters(); err != nil {
		p.fail("%v", err)
	}
	if err := p.outbox(); err != nil {
		p.fail("%v", err)
	}
	return p.res
}

// call runs fn under the meter and records it as name.
func (p *probe) call(name string, fn func(ctx context.Context) error) error {
	ctx, read := p.ctx, func() (float64, bool) { return 0, false }
	if p.meter != nil {
		ctx, read = p.meter(p.ctx)
	}
	err := fn(ctx)
	c := Call{Name: name, Estimate: Estimates[name]}
	if u, ok := read(); ok {
		c.Units = &u
	}
	p.res.Calls = append(p.res.Calls, c)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func (p *probe) fail(format string, args ...any) {
	p.res.Failures = append(p.res.Failures, fmt.Sprintf(format, args...))
}

func (p *probe) check(ok bool, format string, args ...any) {
	if !ok {
		p.fail(format, args...)
	}
}

// refused runs a call that must fail with want.
func (p *probe) refused(name string, want error, fn func(ctx context.Context) error) {
	err := p.call(name, fn)
	p.check(errors.Is(err, want), "%s: want %v, got %v", name, want, err)
}

func (p *probe) jobs() error {
	js := p.set.Jobs
	owner := "selftest-" + ident.New()
	draft := job.Draft{Source: job.SourceAPI, OwnerID: owner, Language: "ru-RU", Filename: "probe.ogg",
		SizeBytes: 1, ContentType: "audio/ogg", UploadWindow: time.Hour}
	var a, b, got job.Job
	var created bool
	var err error
	if err := p.call("Create", func(ctx context.Context) error { a, err = js.Create(ctx, draft); return err }); err != nil {
		return err
	}
	p.check(a.State == job.AwaitingUpload && a.OwnerID == owner, "Create: got state %s owner %q", a.State, a.OwnerID)
	defer p.remove(&a, &b)
	if err := p.call("Get", func(ctx context.Context) error { got, err = js.Get(ctx, a.ID); return err }); err != nil {
		return err
	}
	p.check(got.ID == a.ID && got.State == a.State && got.CreatedAt.Equal(a.CreatedAt), "Get: got %+v, want the job made", got)

	keyed := draft
	keyed.IdempotencyKey = "probe"
	if err := p.call("CreateOnce, new", func(ctx context.Context) error { b, created, err = js.CreateOnce(ctx, keyed); return err }); err != nil {
		return err
	}
	p.check(created, "CreateOnce, new: not created")
	if err := p.call("CreateOnce, made before", func(ctx context.Context) error { got, created, err = js.CreateOnce(ctx, keyed); return err }); err != nil {
		return err
	}
	p.check(!created && got.ID == b.ID, "CreateOnce, made before: created %v, id %s, want %s", created, got.ID, b.ID)

	if err := p.call("Claim", func(ctx context.Context) error { a, err = js.Claim(ctx, a.ID, job.Ingest); return err }); err != nil {
		return err
	}
	p.check(a.ClaimID != "" && a.Attempts == 1, "Claim: claim %q, attempts %d", a.ClaimID, a.Attempts)
	p.refused("Claim, refused", job.ErrNotClaimable, func(ctx context.Context) error { _, err := js.Claim(ctx, a.ID, job.Ingest); return err })

	var c job.Claim
	if err := p.call("Renew", func(ctx context.Context) error { c, err = js.Renew(ctx, a.Claim(), job.Ingest); return err }); err != nil {
		return err
	}
	p.check(c.ID == a.ClaimID && !c.Until.Before(a.ClaimUntil), "Renew: got %+v after %+v", c, a.Claim())
	stranger := c
	stranger.ID = ident.New()
	if _, err := js.Renew(p.ctx, stranger, job.Ingest); !errors.Is(err, job.ErrClaimLost) {
		p.fail("Renew by a stranger: want %v, got %v", job.ErrClaimLost, err)
	}

	a.State = job.Created
	if err := p.call("Save, keep", func(ctx context.Context) error { a, err = js.Save(ctx, a, job.Next{Keep: true}); return err }); err != nil {
		return err
	}
	p.check(a.State == job.Created && a.ClaimID == c.ID, "Save, keep: state %s, claim %q", a.State, a.ClaimID)
	if err := p.call("Release", func(ctx context.Context) error { a, err = js.Release(ctx, a.Claim(), 0, job.Failure{}); return err }); err != nil {
		return err
	}
	p.check(a.ClaimID == "", "Release: still held by %q", a.ClaimID)

	var due []job.Job
	if err := p.call("ClaimDue, one claimed", func(ctx context.Context) error { due, err = js.ClaimDue(ctx, job.Ingest, 10); return err }); err != nil {
		return err
	}
	if p.check(len(due) == 1 && due[0].ID == a.ID, "ClaimDue: claimed %d jobs, want only %s", len(due), a.ID); len(due) == 1 {
		a = due[0]
	}
	if err := p.call("ClaimDue, nothing due", func(ctx context.Context) error { due, err = js.ClaimDue(ctx, job.Ingest, 10); return err }); err != nil {
		return err
	}
	p.check(len(due) == 0, "ClaimDue, nothing due: claimed %d jobs", len(due))
	var next time.Time
	var found bool
	if err := p.call("NextDue", func(ctx context.Context) error { next, found, err = js.NextDue(ctx, job.Ingest.From); return err }); err != nil {
		return err
	}
	p.check(found && !next.After(b.NextRunAt), "NextDue: %v %v, want at most %v", next, found, b.NextRunAt)

	reuseKey := "probe-" + a.ID
	a.State, a.ReuseKey = job.Done, reuseKey
	if err := p.call("Save, done", func(ctx context.Context) error { a, err = js.Save(ctx, a, job.Next{}); return err }); err != nil {
		return err
	}
	p.check(a.State == job.Done && a.ClaimID == "", "Save, done: state %s, claim %q", a.State, a.ClaimID)
	if err := p.call("Reusable", func(ctx context.Context) error {
		got, err = js.Reusable(ctx, reuseKey, a.EndedAt.Add(-time.Hour))
		return err
	}); err != nil {
		return err
	}
	p.check(got.ID == a.ID, "Reusable: found %s, want %s", got.ID, a.ID)

	var page job.Page
	if err := p.call("List, 2 jobs", func(ctx context.Context) error { page, err = js.List(ctx, owner, "", 10); return err }); err != nil {
		return err
	}
	p.check(len(page.Jobs) == 2 && page.Next == "", "List: %d jobs, next %q, want 2 and none", len(page.Jobs), page.Next)
	return nil
}

// remove deletes the probe's jobs, measuring the first; a deleted job is
// marked so and forgets its name and reuse key.
func (p *probe) remove(a, b *job.Job) {
	for _, j := range []*job.Job{a, b} {
		if j.ID == "" {
			continue
		}
		del := func(ctx context.Context) error { _, err := p.set.Jobs.Delete(ctx, j.ID); return err }
		var err error
		if j == a {
			err = p.call("Delete", del)
		} else {
			err = del(p.ctx)
		}
		if err != nil {
			p.fail("%v", err)
			continue
		}
		got, err := p.set.Jobs.Get(p.ctx, j.ID)
		p.check(err == nil && got.Deleted() && got.Filename == "" && got.ReuseKey == "",
			"Get after Delete: want the job deleted and forgotten, got %+v, %v", got, err)
	}
}

func (p *probe) counters() error {
	cs := p.set.Counters
	key, window := "selftest:"+ident.New(), p.clk.Now().UTC().Truncate(time.Minute)
	var used int64
	var ok bool
	var err error
	if err := p.call("Reserve", func(ctx context.Context) error { used, ok, err = cs.Reserve(ctx, key, window, 5, 8); return err }); err != nil {
		return err
	}
	p.check(ok && used == 5, "Reserve: %v, used %d, want true and 5", ok, used)
	if err := p.call("Reserve, refused", func(ctx context.Context) error { used, ok, err = cs.Reserve(ctx, key, window, 5, 8); return err }); err != nil {
		return err
	}
	p.check(!ok && used == 5, "Reserve past the limit: %v, used %d, want false and 5", ok, used)
	if err := p.call("Used", func(ctx context.Context) error { used, err = cs.Used(ctx, key, window); return err }); err != nil {
		return err
	}
	p.check(used == 5, "Used: %d, want 5", used)
	if err := cs.Release(p.ctx, key, window, 5); err != nil {
		return fmt.Errorf("release a counter: %w", err)
	}
	if used, err = cs.Used(p.ctx, key, window); err != nil || used != 0 {
		p.fail("Used after Release: %d, %v, want 0", used, err)
	}

	// A spread counter (docs/database.md, "Hot rows"): the reservation
	// lands on one of its rows, the read sums them all.
	spreadWindow := window.Add(-24 * time.Hour) // a minute no instance uses
	if _, ok, err = cs.Reserve(p.ctx, admission.RequestsKey, spreadWindow, 3, 1000); err != nil {
		return fmt.Errorf("reserve a spread counter: %w", err)
	}
	p.check(ok, "Reserve of a spread counter: refused")
	if err := p.call("Used, spread counter", func(ctx context.Context) error {
		used, err = cs.Used(ctx, admission.RequestsKey, spreadWindow)
		return err
	}); err != nil {
		return err
	}
	p.check(used == 3, "Used of a spread counter: %d, want 3", used)
	return cs.Release(p.ctx, admission.RequestsKey, spreadWindow, 3)
}

// outbox takes a callback entry through its life: made once, taken once,
// given back, claimed when due, delivered.
func (p *probe) outbox() error {
	box := p.set.Outbox
	now := p.clk.Now().UTC().Truncate(time.Millisecond)
	e := outbox.Entry{Kind: outbox.Callback, Key: "probe-" + ident.New(), Payload: "https://example.invalid/hook"}
	var got outbox.Entry
	var ok bool
	var err error
	if err := p.call("Put", func(ctx context.Context) error { got, ok, err = box.Put(ctx, e, now.Add(time.Hour), now); return err }); err != nil {
		return err
	}
	p.check(ok && got.State == outbox.Pending, "Put: created %v, state %s", ok, got.State)
	if err := p.call("Put, recorded", func(ctx context.Context) error { got, ok, err = box.Put(ctx, e, now, now); return err }); err != nil {
		return err
	}
	p.check(!ok && got.NextAt.Equal(now.Add(time.Hour)), "Put of a recorded entry: created %v, due %v", ok, got.NextAt)
	if err := p.call("Begin", func(ctx context.Context) error { got, ok, err = box.Begin(ctx, e, now, time.Minute); return err }); err != nil {
		return err
	}
	p.check(ok && got.LeaseUntil.Equal(now.Add(time.Minute)), "Begin: taken %v, lease until %v", ok, got.LeaseUntil)
	if err := p.call("Begin, held", func(ctx context.Context) error { _, ok, err = box.Begin(ctx, e, now, time.Minute); return err }); err != nil {
		return err
	}
	p.check(!ok, "Begin of a held entry: taken")
	retry := outbox.Outcome{State: outbox.Pending, NextAt: now, Attempt: &outbox.Attempt{At: now, Status: 503, Error: "probe"}}
	if err := p.call("Finish", func(ctx context.Context) error { got, err = box.Finish(ctx, e.Kind, e.Key, retry, now); return err }); err != nil {
		return err
	}
	p.check(got.State == outbox.Pending && got.Attempts == 1, "Finish: state %s, attempts %d", got.State, got.Attempts)
	var due []outbox.Entry
	if err := p.call("ClaimDue (outbox)", func(ctx context.Context) error {
		due, err = box.ClaimDue(ctx, e.Kind, now, time.Minute, 10)
		return err
	}); err != nil {
		return err
	}
	p.check(len(due) == 1 && due[0].Key == e.Key, "ClaimDue of the outbox: %d entries, want only %s", len(due), e.Key)
	got, err = box.Finish(p.ctx, e.Kind, e.Key, outbox.Outcome{State: outbox.Delivered, Attempt: &outbox.Attempt{At: now, Status: 200}}, now)
	if err != nil {
		return fmt.Errorf("finish an outbox entry: %w", err)
	}
	p.check(got.State == outbox.Delivered, "Finish, delivered: state %s", got.State)
	return nil
}
