// Package localstack runs the whole service in one process on one machine:
// the same handlers as in the cloud, with embedded stand-ins only where a
// cloud service has no local form — an S3 server with its objects on disk
// that plays the ObjectCreate trigger (for sources/ only, as the cloud
// trigger's prefix does), the SQLite job store, and a ticker that plays the
// timer. Recognition goes to SpeechKit when credentials are given; without
// them the stack says so and jobs fail with that reason. A stand-in for
// SpeechKit (SPEECHKIT_ENDPOINT) gets short recordings only at a
// synchronous endpoint of its own (SPEECHKIT_SYNC_URL).
//
// The object store checks requests as Object Storage does
// (s3local): every request signed with the stack's own key, made
// at the first start and kept in DATA_DIR (StoreSecretFile, mode 0600);
// presigned URLs until they expire; CORS only for the API's own origin and
// Config.CORSOrigins.
package localstack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"transcriber/internal/apitoken"
	"transcriber/internal/app"
	"transcriber/internal/app/withbot"
	"transcriber/internal/clock"
	"transcriber/internal/job"
	"transcriber/internal/storage/s3/s3local"
	"transcriber/internal/store/sqlite"
	"transcriber/internal/telegram"
	"transcriber/internal/trigger"
	"transcriber/internal/uploadlink"
)

// Config is the local stack's own configuration; the service's is in App.
type Config struct {
	App          app.Config
	HTTPAddr     string        // HTTP_ADDR: the API (default 127.0.0.1:8080)
	S3Addr       string        // LOCAL_S3_ADDR: the object store (default 127.0.0.1:8081)
	DataDir      string        // DATA_DIR: the job store and the objects (default ./data)
	PollInterval time.Duration // POLL_INTERVAL: how often the timer fires (default 5s)
	// IngestWorkers is how many uploads are converted and recognized at
	// once, as a few function instances would (default
	// DefaultIngestWorkers); each upload is accepted before it waits for
	// one.
	IngestWorkers int
	// Shutdown is how long in-flight work may run on after Ctrl-C before
	// it is stopped and its claims released (default 10s).
	Shutdown time.Duration
	// TelegramPoll takes the bot's updates by long polling (getUpdates)
	// instead of waiting for them at the webhook route (TELEGRAM_POLL): a
	// real bot from a machine without a public URL.
	TelegramPoll bool
	// CORSOrigins are the browser origins, besides the API's own (which
	// serves the upload page), allowed to call the object store
	// (CORS_ALLOWED_ORIGINS); "*" allows every origin.
	CORSOrigins []string
	// Log is where the stack logs; default JSON lines on stderr at
	// App.LogLevel.
	Log *slog.Logger
}

// DefaultIngestWorkers is how many uploads the stack works on at once: a
// conversion is one ffmpeg process, and four keep a laptop's cores busy
// while the recognitions of the ones before wait.
const DefaultIngestWorkers = 4

// Bucket is the local object store's one bucket.
const Bucket = "transcriber"

// DBFile is the job store's file under the data directory.
const DBFile = "transcriber.db"

// recognitionConfigured tells whether SpeechKit can be called: with an API
// key, or at an endpoint given explicitly (a scripted server in tests). The
// metadata service's IAM token exists only inside the cloud.
func recognitionConfigured(c app.Config) bool {
	return c.SpeechKit.APIKey != "" || c.SpeechKit.Endpoint != ""
}

// standInWithoutSync tells whether SPEECHKIT_ENDPOINT names a stand-in
// for SpeechKit while SPEECHKIT_SYNC_URL names none: short recordings
// would then go to SpeechKit's own synchronous endpoint, with whatever key
// the stand-in takes.
func standInWithoutSync(c app.Config) bool {
	return c.SpeechKit.Endpoint != "" && c.SpeechKit.SyncURL == ""
}

// withQuickRecognition is c with synchronous recognition as the stack runs
// it: as configured, but off where a stand-in has no synchronous endpoint
// of its own (standInWithoutSync), so audio meant for a stand-in never
// reaches SpeechKit.
func withQuickRecognition(c app.Config) app.Config {
	if standInWithoutSync(c) {
		c.SyncMaxDuration = 0
	}
	return c
}

// quickLine is what the stack says at start of synchronous recognition.
func quickLine(c app.Config) string {
	switch {
	case !recognitionConfigured(c):
		return ""
	case standInWithoutSync(c):
		return "  quick recognition: off — SPEECHKIT_ENDPOINT is set without SPEECHKIT_SYNC_URL; set both to use a stand-in for short recordings"
	case c.SyncMaxDuration <= 0:
		return "  quick recognition: off (SPEECHKIT_SYNC_MAX_DURATION=0)"
	}
	return fmt.Sprintf("  quick recognition: recordings up to %s in one request to %s", c.SyncMaxDuration, c.SpeechKit.SyncEndpoint())
}

// claimTaker takes back the claims on a store (the embedded job store's
// TakeBackClaims).
type claimTaker interface {
	TakeBackClaims(ctx context.Context) (int, error)
}

// Run runs the stack until ctx ends, then shuts down cleanly. It writes
// where everything is to out.
func Run(ctx context.Context, cfg Config, out io.Writer) error {
	cfg = withDefaults(cfg)
	// The start names the data directory whole, wherever it was started.
	if abs, err := filepath.Abs(cfg.DataDir); err == nil {
		cfg.DataDir = abs
	}
	log := cfg.Log
	if log == nil {
		log = app.NewLogger(cfg.App.LogLevel)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	stores, err := sqlite.OpenSet(ctx, filepath.Join(cfg.DataDir, DBFile), clock.System())
	if err != nil {
		return err
	}
	defer stores.Close()
	// The stack is the only worker on its store: every claim there now is
	// its own from a run that did not settle it (a kill, a crash).
	taker, ok := stores.Jobs.(claimTaker)
	if !ok {
		return fmt.Errorf("the job store cannot take back claims")
	}
	tookBack, err := taker.TakeBackClaims(ctx)
	if err != nil {
		return err
	}
	if tookBack > 0 {
		log.Info("took back the claims the last run left; their jobs go on", "jobs", tookBack)
	}

	storeSecret, err := localSecret(filepath.Join(cfg.DataDir, StoreSecretFile))
	if err != nil {
		return err
	}
	s3lis, err := net.Listen("tcp", cfg.S3Addr)
	if err != nil {
		return fmt.Errorf("object store address %s: %w", cfg.S3Addr, err)
	}
	apiLis, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		_ = s3lis.Close()
		return fmt.Errorf("HTTP address %s: %w", cfg.HTTPAddr, err)
	}
	closeListeners := func() { _ = s3lis.Close(); _ = apiLis.Close() }

	acfg := withQuickRecognition(cfg.App)
	apiURL := "http://" + apiLis.Addr().String()
	if acfg.Telegram.PublicURL == "" {
		acfg.Telegram.PublicURL = apiURL
	}
	objects, err := s3local.New(Bucket, s3local.Options{
		Dir:             filepath.Join(cfg.DataDir, "objects"),
		AccessKeyID:     StoreKeyID,
		SecretAccessKey: string(storeSecret),
		// The upload page is served by the API, at the address its links
		// point to.
		AllowedOrigins: append([]string{apiURL, originOf(acfg.Telegram.PublicURL)}, cfg.CORSOrigins...),
	})
	if err != nil {
		closeListeners()
		return err
	}
	objects.URL = "http://" + s3lis.Addr().String()
	acfg.S3 = objects.Config()
	if len(acfg.Telegram.UploadLinkSecret) == 0 {
		if acfg.Telegram.UploadLinkSecret, err = localSecret(filepath.Join(cfg.DataDir, LinkSecretFile)); err != nil {
			closeListeners()
			return err
		}
	}
	// SpeechKit cannot read a local object store: the audio goes in the
	// request (up to pipeline.DefaultMaxInlineBytes).
	acfg.Pipeline.InlineAudio = true
	if acfg.Pipeline.PollFor == 0 {
		acfg.Pipeline.PollFor = cfg.PollInterval
	}
	// The counters pace submissions to SpeechKit's request quota, which a
	// local stack shares with every other user of the same account.
	opt := app.Options{Stores: stores, Log: log}
	withbot.Option(&opt)
	if !recognitionConfigured(acfg) {
		opt.Recognizer = app.Unconfigured{}
	}
	a, err := app.New(acfg, opt)
	if err != nil {
		closeListeners()
		return err
	}
	defer a.Close()

	// Work runs on its own context, so Ctrl-C first stops new work and lets
	// the work in hand finish for a while.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	// Uploads are accepted one after another as their events come (a few
	// store calls each), then wait for one of the workers that convert and
	// recognize: a job whose file arrived says so while the workers are
	// busy.
	events, accepted := newQueue(), newQueue()
	objects.OnCreate(sourceEvents(events))

	// An upload whose event was not handled before the last stop is found
	// again: every source is offered to ingest, which ignores the jobs past
	// it (one store read each).
	sources, err := objects.Keys("sources/")
	if err != nil {
		log.Warn("could not list the uploads to resume", "error", err.Error())
	}
	for _, key := range sources {
		events.push(objectEvent(Bucket, key))
	}

	apiSrv := newServer(router(a.API, a.Bot), log)
	s3Srv := newServer(objects.Handler(), log)
	var servers, workers sync.WaitGroup
	serve := func(s *http.Server, l net.Listener) {
		defer servers.Done()
		if err := s.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("server stopped", "addr", l.Addr().String(), "error", err.Error())
		}
	}
	servers.Add(2)
	go serve(apiSrv, apiLis)
	go serve(s3Srv, s3lis)
	workers.Add(2 + cfg.IngestWorkers)
	go func() { defer workers.Done(); acceptLoop(workCtx, a, events, accepted) }()
	for range cfg.IngestWorkers {
		go func() { defer workers.Done(); ingestLoop(workCtx, a, accepted) }()
	}
	go func() { defer workers.Done(); pollLoop(ctx, workCtx, a, cfg.PollInterval) }()
	if poller, ok := a.Bot.(interface{ LongPoll(context.Context) error }); ok && cfg.TelegramPoll {
		workers.Add(1)
		go func() {
			defer workers.Done()
			if err := poller.LongPoll(ctx); err != nil {
				log.Error("Telegram long polling stopped", "error", err.Error())
			}
		}()
	}

	if err := announce(ctx, out, cfg, a, stores.Tokens, apiURL, objects.URL, tookBack); err != nil {
		log.Error("could not make a local token", "error", err.Error())
	}

	<-ctx.Done()
	fmt.Fprintln(out, "shutting down: finishing the work in hand")
	// No new jobs; the object store stays up while the work in hand uses it.
	quick, cancelQuick := context.WithTimeout(context.Background(), time.Second)
	_ = apiSrv.Shutdown(quick)
	cancelQuick()
	events.close() // queued events are still handled; later ones are found again at the next start
	finished := make(chan struct{})
	go func() { workers.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(cfg.Shutdown):
		stopWork() // the work still running stops, and records the end of its attempt
		<-finished
	}
	quick, cancelQuick = context.WithTimeout(context.Background(), time.Second)
	_ = s3Srv.Shutdown(quick)
	cancelQuick()
	servers.Wait()
	fmt.Fprintln(out, "stopped")
	return nil
}

// newServer serves h, with net/http's own complaints (a panic, a
// superfluous WriteHeader) logged through log as JSON lines like the rest,
// not as plain text on stderr.
func newServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
}

// router sends the webhook's POSTs to the bot and every other request to
// the API, which answers it whatever its path: no second mux, so nothing
// here cleans a path or redirects.
func router(api, bot http.Handler) http.Handler {
	if bot == nil {
		return api
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == telegram.WebhookPath && r.URL.RawPath == "" {
			bot.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// sourceEvents hands the trigger's events for uploads to q: objects
// created under sources/ only, like the cloud trigger's prefix filter (the
// stack's own audio/ and results/ objects start nothing).
func sourceEvents(q *queue) func(bucket, key string, size int64) {
	prefix := job.SourceKey("")
	return func(bucket, key string, _ int64) {
		if strings.HasPrefix(key, prefix) {
			q.push(objectEvent(bucket, key))
		}
	}
}

// originOf is the scheme://host[:port] of a URL, or "" if it has none.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

func withDefaults(c Config) Config {
	if c.HTTPAddr == "" {
		c.HTTPAddr = "127.0.0.1:8080"
	}
	if c.S3Addr == "" {
		c.S3Addr = "127.0.0.1:8081"
	}
	if c.DataDir == "" {
		c.DataDir = "data"
	}
	if c.PollInterval == 0 {
		c.PollInterval = 5 * time.Second
	}
	if c.Shutdown == 0 {
		c.Shutdown = 10 * time.Second
	}
	if c.IngestWorkers <= 0 {
		c.IngestWorkers = DefaultIngestWorkers
	}
	return c
}

// announce tells where everything is, and hands out a token on the first
// start (the secret is shown only then).
func announce(ctx context.Context, out io.Writer, cfg Config, a *app.App, tokens apitoken.Store, api, s3url string, tookBack int) error {
	fmt.Fprintf(out, "transcriber is running\n  api:     %s\n  objects: %s (bucket %s)\n  data:    %s\n", api, s3url, Bucket, cfg.DataDir)
	if tookBack > 0 {
		fmt.Fprintf(out, "  resumed: %d jobs the last run held when it stopped; they go on now\n", tookBack)
	}
	if recognitionConfigured(a.Config) {
		fmt.Fprintf(out, "  recognition: SpeechKit at %s (audio sent inline)\n", endpointOrDefault(a.Config.SpeechKit.Endpoint))
	} else {
		fmt.Fprintln(out, "  recognition: NOT CONFIGURED — set SPEECHKIT_API_KEY (and SPEECHKIT_FOLDER_ID) to transcribe; until then jobs fail with recognition_not_configured")
	}
	if line := quickLine(a.Config); line != "" {
		fmt.Fprintln(out, line)
	}
	if a.Config.API.CallbackAllowPrivate {
		fmt.Fprintln(out, "  callbacks: CALLBACK_ALLOW_PRIVATE=true — callback URLs may be http and reach this machine and private networks; for local use and tests only")
	}
	switch {
	case a.Bot == nil:
		fmt.Fprintln(out, "  telegram: not configured — set TELEGRAM_BOT_TOKEN (and TELEGRAM_WEBHOOK_SECRET, TELEGRAM_ALLOWED_USERS) to run the bot")
	case cfg.TelegramPoll:
		fmt.Fprintln(out, "  telegram: taking updates by long polling (TELEGRAM_POLL=true)")
	default:
		fmt.Fprintf(out, "  telegram: webhook at %s%s\n", api, telegram.WebhookPath)
	}
	list, err := tokens.List(ctx)
	if err != nil {
		return err
	}
	for _, t := range list {
		if !t.Revoked() {
			fmt.Fprintln(out, "  token:   use the one printed at the first start, or make one: go run ./cmd/transcriber token create --name NAME")
			return nil
		}
	}
	tok, secret, err := apitoken.New("local", clock.System().Now())
	if err != nil {
		return err
	}
	if err := tokens.Create(ctx, tok); err != nil {
		return err
	}
	fmt.Fprintf(out, "  token:   %s   (made for local use; shown only now)\n", secret)
	fmt.Fprintf(out, "  callback secret: %s   (verifies the callbacks of this token's jobs; shown only now)\n", tok.CallbackSecret)
	return nil
}

func endpointOrDefault(e string) string {
	if e == "" {
		return "stt.api.cloud.yandex.net:443"
	}
	return e
}

// StoreKeyID is the access key id of the local object store's key; its
// secret is kept in StoreSecretFile.
const StoreKeyID = "transcriber-local"

// StoreSecretFile keeps the local object store's secret access key under
// the data directory (mode 0600), made at the first start: only the stack
// signs requests and URLs with it.
const StoreSecretFile = "object-store.secret"

// LinkSecretFile keeps the local stack's upload link secret under the data
// directory, so links stay valid across restarts.
const LinkSecretFile = "upload-link.secret"

// localSecret reads the secret kept at path, making one on the first start.
func localSecret(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil && len(b) >= uploadlink.MinSecretLen {
		return b, nil
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	secret := []byte(hex.EncodeToString(raw))
	if err := os.WriteFile(path, secret, 0o600); err != nil {
		return nil, fmt.Errorf("upload link secret: %w", err)
	}
	return secret, nil
}

// objectEvent is the ObjectCreate event Object Storage's trigger sends.
func objectEvent(bucket, key string) *trigger.ObjectEvent {
	var ev trigger.ObjectEvent
	var m trigger.ObjectMessage
	m.Metadata.EventID = "local-" + key
	m.Metadata.EventType = trigger.TypeObjectCreate
	m.Metadata.CreatedAt = clock.System().Now().Format(time.RFC3339Nano)
	m.Details.BucketID = bucket
	m.Details.ObjectID = key
	ev.Messages = append(ev.Messages, m)
	return &ev
}

// acceptLoop accepts each upload as its event comes (Pipeline.Accept: its
// job says created at once), then hands the event on to the ingest
// workers; once events is closed and drained, it closes accepted.
func acceptLoop(ctx context.Context, a *app.App, events, accepted *queue) {
	defer accepted.close()
	for {
		ev, ok := events.pop()
		if !ok {
			return
		}
		for _, m := range ev.Messages {
			if err := a.Pipeline.Accept(ctx, m.Details.ObjectID); err != nil {
				a.Log.Warn("accepting an upload failed; its ingest tries again", "error", err.Error())
			}
		}
		accepted.push(ev)
	}
}

// ingestLoop hands each upload's event to the ingest handler, as a
// trigger hands it to one of the function's instances; IngestWorkers of
// them run at once.
func ingestLoop(ctx context.Context, a *app.App, q *queue) {
	for {
		ev, ok := q.pop()
		if !ok {
			return
		}
		if err := a.OnObjects(ctx, ev); err != nil {
			a.Log.Warn("ingest event failed; the poll sweep will take the job", "error", err.Error())
		}
	}
}

// pollLoop plays the timer: one poll call at a time, every interval, until
// stop ends; a call in progress then runs on under work.
func pollLoop(stop, work context.Context, a *app.App, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := a.OnTimer(work, &trigger.TimerEvent{}); err != nil && work.Err() == nil {
			a.Log.Warn("poll failed", "error", err.Error())
		}
		select {
		case <-stop.Done():
			return
		case <-t.C:
		}
	}
}

// queue is an unbounded FIFO of events: an upload never waits for ingest.
type queue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []*trigger.ObjectEvent
	closed bool
}

func newQueue() *queue {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) push(ev *trigger.ObjectEvent) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.items = append(q.items, ev)
		q.cond.Signal()
	}
}

// pop waits for an event; false once the queue is closed and drained.
func (q *queue) pop() (*trigger.ObjectEvent, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.closed {
		q.cond.Wait()
	}
	if len(q.items) == 0 {
		return nil, false
	}
	ev := q.items[0]
	q.items = q.items[1:]
	return ev, true
}

func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}
