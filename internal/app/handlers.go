package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/httpapi"
	"transcriber/internal/pipeline"
	"transcriber/internal/status"
	"transcriber/internal/store"
	"transcriber/internal/store/ydb"
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
	a.alertOwner(ctx)
	a.expireOutbox(ctx)
	if a.idle(ctx) {
		return nil
	}
	st, err := a.Pipeline.Poll(ctx)
	level := slog.LevelInfo
	if st == (pipeline.PollStats{}) {
		level = slog.LevelDebug // an idle minute is not news
	}
	a.Log.Log(ctx, level, "poll done", "checked", st.Checked, "finished", st.Finished, "ingested", st.Ingested)
	if a.Bot != nil {
		n, serr := a.Bot.Sweep(ctx)
		if n > 0 || serr != nil {
			a.Log.InfoContext(ctx, "delivery sweep done", "delivered", n)
		}
		err = errors.Join(err, serr)
	}
	if a.Callbacks != nil {
		n, cerr := a.Callbacks.Sweep(ctx)
		if n > 0 || cerr != nil {
			a.Log.InfoContext(ctx, "callback sweep done", "delivered", n)
		}
		err = errors.Join(err, cerr)
	}
	return err
}

// expiryBatch is the most outbox entries one timer call deletes.
const expiryBatch = 200

// expireOutbox deletes the outbox entries last written a retention ago
// where the store does not expire them itself, each timer call; a failure
// waits for the next.
func (a *App) expireOutbox(ctx context.Context) {
	if a.expirer == nil {
		return
	}
	before := a.Clock.Now().Add(-a.Pipeline.JobRetention())
	if _, err := a.expirer.Expire(ctx, before, expiryBatch); err != nil {
		a.Log.WarnContext(ctx, "outbox not expired", "error", err.Error())
	}
}

// alertOwner sends the owner's alerts through the bot, idle calls too: an
// instance asks once a status.CheckEvery window, one call in each reads
// the status (Gate.Check), each alert goes once in its window, recorded
// (Gate.Take) so Decide does not return it again. A failure waits for the
// next window.
func (a *App) alertOwner(ctx context.Context) {
	if a.Bot == nil || a.Config.Telegram.OwnerID == 0 || a.Counters == nil || a.Status == nil {
		return
	}
	gate := status.Gate{Counters: a.Counters}
	now := a.Clock.Now()
	window := now.Truncate(status.CheckEvery)
	a.alertMu.Lock()
	asked := !a.alertAsked.Before(window)
	a.alertAsked = window
	a.alertMu.Unlock()
	if asked {
		return
	}
	if ok, err := gate.Check(ctx, now); err != nil || !ok {
		if err != nil {
			a.Log.WarnContext(ctx, "alert check failed", "error", err.Error())
		}
		return
	}
	s, err := a.Status.Read(ctx, now)
	if err != nil {
		a.Log.WarnContext(ctx, "alert status read failed", "error", err.Error())
		return
	}
	sent, err := gate.Sent(ctx, now)
	if err != nil {
		a.Log.WarnContext(ctx, "sent alerts read failed", "error", err.Error())
		return
	}
	for _, al := range status.Decide(s, sent, now) {
		if err := a.Bot.TellOwner(ctx, al, status.WindowOf(al.Kind, s.At)); err != nil {
			a.Log.WarnContext(ctx, "alert send failed", "kind", string(al.Kind), "error", err.Error())
			continue
		}
		if _, err := gate.Take(ctx, al.Kind, s.At); err != nil {
			a.Log.WarnContext(ctx, "alert record failed", "kind", string(al.Kind), "error", err.Error())
		}
		a.Log.InfoContext(ctx, "alert sent", "kind", string(al.Kind))
	}
}

// idle reports whether, by the agenda (one read), nothing falls due before
// the poll would stop looking; it then only housekeeps. Without a readable
// agenda each part of the call reads for itself.
func (a *App) idle(ctx context.Context) bool {
	if a.Agenda == nil {
		return false
	}
	at, ok, err := a.Agenda.NextWork(ctx, pipeline.SweptStates())
	if err != nil {
		a.Log.WarnContext(ctx, "agenda read failed", "error", err.Error())
		return false
	}
	if ok && at.Before(a.Clock.Now().Add(a.Pipeline.PollFor())) {
		return false
	}
	a.Pipeline.Housekeep(ctx)
	a.Log.DebugContext(ctx, "nothing due", "next_due", at)
	return true
}

var errNoBot = errs.New(errs.Unavailable, "telegram_not_configured",
	"the Telegram bot is not configured here (set TELEGRAM_BOT_TOKEN and TELEGRAM_WEBHOOK_SECRET)")

// OnTelegram serves the webhook behind API Gateway: the telegram function.
func (a *App) OnTelegram(ctx context.Context, ev *httpapi.GatewayRequest) (*httpapi.GatewayResponse, error) {
	if a.Bot == nil {
		return nil, errNoBot
	}
	return httpapi.ServeGateway(ctx, a.Bot, a.Log, ev)
}

// Instance is a function instance's App, built on the first call that
// succeeds.
type Instance struct {
	mu    sync.Mutex
	app   *App
	Build func(ctx context.Context) (*App, error)
}

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

var ErrNoCloudStore = errs.New(errs.Unavailable, "job_store_missing",
	"YDB_CONNECTION_STRING is not set: the functions keep their jobs in YDB")

// ErrSQLiteInCloud: the embedded store is a file on one machine; the
// functions' instances share nothing but YDB.
var ErrSQLiteInCloud = errs.New(errs.Invalid, "store_sqlite_in_cloud",
	"STORE=sqlite is for the local stack (make run); the functions need STORE=ydb (the default)")

const YDBOpenTimeout = 10 * time.Second

// CloudStores opens YDB at YDB_CONNECTION_STRING, as the function's
// service account inside Cloud Functions (LAMBDA_TASK_ROOT set), else from
// the YDB_* variables. The driver outlives the call that opens it, so it
// gets a context of its own.
func CloudStores(ctx context.Context, getenv func(string) string) (store.Set, error) {
	switch kind := getenv("STORE"); kind {
	case "", "ydb":
	case "sqlite":
		return store.Set{}, ErrSQLiteInCloud
	default:
		return store.Set{}, errs.New(errs.Invalid, "store_unknown",
			fmt.Sprintf("STORE=%q: want ydb (the functions' default) or sqlite (the local stack only)", kind))
	}
	dsn := getenv("YDB_CONNECTION_STRING")
	if dsn == "" {
		return store.Set{}, ErrNoCloudStore
	}
	creds := ydb.EnvironCredentials
	if getenv("LAMBDA_TASK_ROOT") != "" {
		creds = ydb.MetadataCredentials
	}
	openCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), YDBOpenTimeout)
	defer cancel()
	set, err := ydb.OpenSet(openCtx, dsn, clock.System(), ydb.WithCredentials(creds))
	if err != nil {
		return store.Set{}, fmt.Errorf("open the job store: %w", err)
	}
	return set, nil
}

// CloudBuild builds a function's App from getenv and the cloud stores.
func CloudBuild(getenv func(string) string, tune ...func(*Options)) func(ctx context.Context) (*App, error) {
	return func(ctx context.Context) (*App, error) {
		cfg, err := FromEnv(getenv)
		if err != nil {
			return nil, err
		}
		stores, err := CloudStores(ctx, getenv)
		if err != nil {
			return nil, err
		}
		opt := Options{Stores: stores}
		for _, f := range tune {
			f(&opt)
		}
		return New(cfg, opt)
	}
}

// NoMedia is the option of the api function, which ships no ffmpeg.
func NoMedia(o *Options) { o.WithoutMedia = true }
