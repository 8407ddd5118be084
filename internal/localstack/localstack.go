// Package localstack runs the whole service in one process: the cloud's
// handlers, with stand-ins where a cloud service has no local form: the
// s3local object store (its objects on disk, its key made at the first
// start in StoreSecretFile) playing the ObjectCreate trigger for sources/,
// the SQLite job store, and a ticker for the timer. Without SpeechKit
// credentials jobs fail recognition_not_configured.
package localstack

import (
	"cmp"
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
	"transcriber/internal/speechkit"
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
	// IngestWorkers convert and recognize uploads at once, as function
	// instances would (default DefaultIngestWorkers); an upload is
	// accepted before it waits for one.
	IngestWorkers int
	Shutdown      time.Duration // how long work in hand runs on after Ctrl-C (default 10s)
	// TelegramPoll takes the bot's updates by getUpdates (TELEGRAM_POLL): a
	// machine without a public URL.
	TelegramPoll bool
	// CORSOrigins may call the object store besides the API's own
	// (CORS_ALLOWED_ORIGINS); "*" allows all.
	CORSOrigins []string
	Log         *slog.Logger // default JSON lines on stderr
}

// DefaultIngestWorkers: four ffmpeg processes keep a laptop's cores busy.
const DefaultIngestWorkers = 4

const (
	Bucket = "transcriber" // the local object store's one bucket
	DBFile = "transcriber.db"
)

// recognitionConfigured: an API key or an explicit endpoint (a stand-in);
// the metadata service's IAM token exists only in the cloud.
func recognitionConfigured(c app.Config) bool {
	return c.SpeechKit.APIKey != "" || c.SpeechKit.Endpoint != ""
}

// quickRecognition turns synchronous recognition off where
// SPEECHKIT_ENDPOINT names a stand-in but SPEECHKIT_SYNC_URL none (short
// recordings would reach SpeechKit), with the line that tells it.
func quickRecognition(c app.Config) (app.Config, string) {
	switch {
	case !recognitionConfigured(c):
		return c, ""
	case c.SpeechKit.Endpoint != "" && c.SpeechKit.SyncURL == "":
		c.SyncMaxDuration = 0
		return c, "  quick recognition: off — SPEECHKIT_ENDPOINT is set without SPEECHKIT_SYNC_URL; set both to use a stand-in for short recordings"
	case c.SyncMaxDuration <= 0:
		return c, "  quick recognition: off (SPEECHKIT_SYNC_MAX_DURATION=0)"
	}
	return c, fmt.Sprintf("  quick recognition: recordings up to %s in one request to %s", c.SyncMaxDuration, c.SpeechKit.SyncEndpoint())
}

type claimTaker interface {
	TakeBackClaims(ctx context.Context) (int, error)
}

// Run runs the stack until ctx ends, telling out where everything is.
func Run(ctx context.Context, cfg Config, out io.Writer) error {
	cfg = withDefaults(cfg)
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
	// The stack is its store's only worker: every claim is from a run that
	// was killed.
	taker, ok := stores.Jobs.(claimTaker)
	if !ok {
		return fmt.Errorf("the job store cannot take back claims")
	}
	tookBack, err := taker.TakeBackClaims(ctx)
	if err != nil {
		return err
	}
	if tookBack > 0 {
		log.Info("claims taken back", "jobs", tookBack)
	}

	storeSecret, err := localSecret(filepath.Join(cfg.DataDir, StoreSecretFile))
	if err != nil {
		return err
	}
	s3lis, err := net.Listen("tcp", cfg.S3Addr)
	if err != nil {
		return fmt.Errorf("object store address %s: %w", cfg.S3Addr, err)
	}
	defer s3lis.Close() // again after Serve's close: no harm
	apiLis, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("HTTP address %s: %w", cfg.HTTPAddr, err)
	}
	defer apiLis.Close()

	acfg, _ := quickRecognition(cfg.App)
	apiURL := "http://" + apiLis.Addr().String()
	acfg.Telegram.PublicURL = cmp.Or(acfg.Telegram.PublicURL, apiURL)
	objects, err := s3local.New(Bucket, s3local.Options{
		Dir:             filepath.Join(cfg.DataDir, "objects"),
		AccessKeyID:     StoreKeyID,
		SecretAccessKey: string(storeSecret),
		// The API serves the upload page.
		AllowedOrigins: append([]string{apiURL, originOf(acfg.Telegram.PublicURL)}, cfg.CORSOrigins...),
	})
	if err != nil {
		return err
	}
	objects.URL = "http://" + s3lis.Addr().String()
	acfg.S3 = objects.Config()
	if len(acfg.Telegram.UploadLinkSecret) == 0 {
		if acfg.Telegram.UploadLinkSecret, err = localSecret(filepath.Join(cfg.DataDir, LinkSecretFile)); err != nil {
			return err
		}
	}
	// SpeechKit cannot read a local object store.
	acfg.Pipeline.InlineAudio = true
	if acfg.Pipeline.PollFor == 0 {
		acfg.Pipeline.PollFor = cfg.PollInterval
	}
	opt := app.Options{Stores: stores, Log: log}
	withbot.Option(&opt)
	if !recognitionConfigured(acfg) {
		opt.Recognizer = app.Unconfigured{}
	}
	a, err := app.New(acfg, opt)
	if err != nil {
		return err
	}
	defer a.Close()

	// Ctrl-C stops new work first; the work in hand has cfg.Shutdown.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	// An upload is accepted as its event comes, then waits for a worker.
	events, accepted := newQueue(), newQueue()
	objects.OnCreate(sourceEvents(events))

	// Events the last run did not handle: every source goes to ingest,
	// which ignores jobs past it.
	sources, err := objects.Keys("sources/")
	if err != nil {
		log.Warn("source listing failed", "error", err.Error())
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
				log.Error("long polling stopped", "error", err.Error())
			}
		}()
	}

	if err := announce(ctx, out, cfg, a, stores.Tokens, apiURL, objects.URL, tookBack); err != nil {
		log.Error("local token failed", "error", err.Error())
	}

	<-ctx.Done()
	fmt.Fprintln(out, "shutting down: finishing the work in hand")
	// The object store stays up while the work in hand uses it.
	quick, cancelQuick := context.WithTimeout(context.Background(), time.Second)
	_ = apiSrv.Shutdown(quick)
	cancelQuick()
	events.close() // queued events are still handled, later ones at the next start
	finished := make(chan struct{})
	go func() { workers.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(cfg.Shutdown):
		stopWork() // the work still running records the end of its attempt
		<-finished
	}
	quick, cancelQuick = context.WithTimeout(context.Background(), time.Second)
	_ = s3Srv.Shutdown(quick)
	cancelQuick()
	servers.Wait()
	fmt.Fprintln(out, "stopped")
	return nil
}

// newServer serves h, net/http's own complaints logged through log.
func newServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
}

// router sends the webhook's POSTs to the bot, the rest to the API: no mux
// that would clean a path or redirect.
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

// sourceEvents queues objects created under sources/, as the cloud
// trigger's prefix filter does.
func sourceEvents(q *queue) func(bucket, key string, size int64) {
	prefix := job.SourceKey("")
	return func(bucket, key string, _ int64) {
		if strings.HasPrefix(key, prefix) {
			q.push(objectEvent(bucket, key))
		}
	}
}

func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

func withDefaults(c Config) Config {
	c.HTTPAddr = cmp.Or(c.HTTPAddr, "127.0.0.1:8080")
	c.S3Addr = cmp.Or(c.S3Addr, "127.0.0.1:8081")
	c.DataDir = cmp.Or(c.DataDir, "data")
	c.PollInterval = cmp.Or(c.PollInterval, 5*time.Second)
	c.Shutdown = cmp.Or(c.Shutdown, 10*time.Second)
	c.IngestWorkers = cmp.Or(c.IngestWorkers, DefaultIngestWorkers)
	return c
}

// announce tells where everything is, and makes a token at the first start.
func announce(ctx context.Context, out io.Writer, cfg Config, a *app.App, tokens apitoken.Store, api, s3url string, tookBack int) error {
	fmt.Fprintf(out, "transcriber is running\n  api:     %s\n  objects: %s (bucket %s)\n  data:    %s\n", api, s3url, Bucket, cfg.DataDir)
	if tookBack > 0 {
		fmt.Fprintf(out, "  resumed: %d jobs the last run held when it stopped; they go on now\n", tookBack)
	}
	if recognitionConfigured(a.Config) {
		fmt.Fprintf(out, "  recognition: SpeechKit at %s (audio sent inline)\n", cmp.Or(a.Config.SpeechKit.Endpoint, speechkit.DefaultEndpoint))
	} else {
		fmt.Fprintln(out, "  recognition: NOT CONFIGURED — set SPEECHKIT_API_KEY (and SPEECHKIT_FOLDER_ID) to transcribe; until then jobs fail with recognition_not_configured")
	}
	if _, line := quickRecognition(a.Config); line != "" {
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

// The local object store's key id, and the files under the data directory
// (mode 0600) that keep its secret and the upload links' across restarts.
const (
	StoreKeyID      = "transcriber-local"
	StoreSecretFile = "object-store.secret"
	LinkSecretFile  = "upload-link.secret"
)

// localSecret reads the secret kept at path, making one the first time.
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

// acceptLoop accepts each upload (its job says created at once) and hands
// it to the ingest workers.
func acceptLoop(ctx context.Context, a *app.App, events, accepted *queue) {
	defer accepted.close()
	for {
		ev, ok := events.pop()
		if !ok {
			return
		}
		for _, m := range ev.Messages {
			if err := a.Pipeline.Accept(ctx, m.Details.ObjectID); err != nil {
				a.Log.Warn("accept failed", "error", err.Error())
			}
		}
		accepted.push(ev)
	}
}

// ingestLoop is one ingest function instance.
func ingestLoop(ctx context.Context, a *app.App, q *queue) {
	for {
		ev, ok := q.pop()
		if !ok {
			return
		}
		if err := a.OnObjects(ctx, ev); err != nil {
			a.Log.Warn("ingest failed", "error", err.Error())
		}
	}
}

// pollLoop plays the timer until stop ends; a call in progress runs on
// under work.
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

// queue is an unbounded FIFO: an upload never waits for ingest.
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
