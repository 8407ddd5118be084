package app

import (
	"context"
	"log/slog"
	"sync"

	"transcriber/internal/apitoken"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/pipeline"
	"transcriber/internal/trigger"
)

// OnObjects handles an Object Storage trigger's batch: the ingest function.
func (a *App) OnObjects(ctx context.Context, ev *trigger.ObjectEvent) error {
	if ev == nil {
		return errs.New(errs.Invalid, "empty_event", "no event")
	}
	return trigger.HandleObjects(ctx, a.Log, a.Config.S3.Bucket, *ev, a.Pipeline)
}

// OnTimer handles a timer trigger's call: the poll function.
func (a *App) OnTimer(ctx context.Context, _ *trigger.TimerEvent) error {
	st, err := a.Pipeline.Poll(ctx)
	level := slog.LevelInfo
	if st == (pipeline.PollStats{}) {
		level = slog.LevelDebug // an idle minute is not news
	}
	a.Log.Log(ctx, level, "poll done", "checked", st.Checked, "finished", st.Finished, "ingested", st.Ingested)
	return err
}

// Instance holds one function instance's App, built on the first call and
// kept for the next ones. A failed build is not kept: the next call tries
// again.
type Instance struct {
	mu    sync.Mutex
	app   *App
	Build func(ctx context.Context) (*App, error)
}

// Get returns the instance's App, building it if needed.
func (i *Instance) Get(ctx context.Context) (*App, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.app != nil {
		return i.app, nil
	}
	a, err := i.Build(ctx)
	if err != nil {
		return nil, err
	}
	i.app = a
	return a, nil
}

// Set installs a ready App (tests, the local stack).
func (i *Instance) Set(a *App) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.app = a
}

// ErrNoCloudStore is what a function says until the YDB job store exists:
// it fails loudly at its first call rather than run without state.
var ErrNoCloudStore = errs.New(errs.Unavailable, "job_store_missing",
	"the cloud job store (YDB) is not built yet; the functions cannot run in the cloud until it is")

// CloudStores open the job and token stores the functions use in the
// cloud.
func CloudStores(context.Context, func(string) string) (job.Store, apitoken.Store, error) {
	return nil, nil, ErrNoCloudStore
}

// CloudBuild is how a function builds its App: configuration from getenv
// (os.Getenv) and the cloud job store.
func CloudBuild(getenv func(string) string) func(ctx context.Context) (*App, error) {
	return func(ctx context.Context) (*App, error) {
		cfg, err := FromEnv(getenv)
		if err != nil {
			return nil, err
		}
		jobs, tokens, err := CloudStores(ctx, getenv)
		if err != nil {
			return nil, err
		}
		return New(cfg, Options{Store: jobs, Tokens: tokens})
	}
}
