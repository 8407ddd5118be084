package main

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"

	"transcriber/internal/clock"
	"transcriber/internal/store/storecheck"
	"transcriber/internal/telegram/tgconf"
)

// The bundled sample, 4.6 s of English (10 KB), made with espeak-ng 1.51
// and ffmpeg 5.1:
//
//	espeak-ng -v en-us -s 140 -w s.wav "$(cat sample.txt)"
//	ffmpeg -i s.wav -ac 1 -ar 48000 -c:a libopus -b:a 16k -application voip \
//	  -map_metadata -1 -fflags +bitexact -flags:a +bitexact sample.ogg
var (
	//go:embed selftest/sample.ogg
	sampleAudio []byte
	//go:embed selftest/sample.txt
	sampleText string
)

const (
	sampleLanguage         = "en-US"
	defaultSelftestTimeout = 5 * time.Minute
	// A job is read after 50 ms, then at twice the pause up to 1 s: a
	// figure is that precise.
	selftestPollFirst      = 50 * time.Millisecond
	selftestPollMax        = time.Second
	selftestRequestTimeout = 30 * time.Second
	minWordShare           = 60 // % of the expected words a transcript must hold
	maxAnswerBytes         = 1 << 20
)

// The checks, in the order they run.
const (
	checkAPI      = "api"
	checkUpload   = "upload"
	checkAsync    = "recognition-async"
	checkSync     = "recognition-sync"
	checkWebhook  = "telegram-webhook"
	checkStore    = "store"
	checkCleanup  = "cleanup"
	selftestFiles = "transcriber-selftest"
)

const selftestUsage = `usage: transcriber selftest --api URL --token TOKEN [--audio FILE --expect TEXT [--lang CODE]]
                           [--timeout 5m] [--bot] [--store] [--json]
       transcriber selftest --store [--timeout 5m] [--json]`

type selftestOptions struct {
	api, token       string
	audio, expect    string
	lang             string
	timeout          time.Duration
	bot, json        bool
	store            bool          // the store probe, in a scratch directory openScratch opens
	openScratch      scratchOpener // YDB_CONNECTION_STRING's
	audioBytes       []byte        // the recording sent, read before any check
	filename         string
	botToken, botAPI string // with --bot: TELEGRAM_BOT_TOKEN, TELEGRAM_API_URL
}

// selftestCmd runs real jobs through a running installation's public API,
// each check a line (or, with --json, one object).
func selftestCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	o, done, err := parseSelftest(args, getenv, stdout)
	if done || err != nil {
		return err
	}
	r := newSelftest(o)
	rep := r.run(ctx, stdout)
	if o.json {
		if err := printJSON(stdout, rep); err != nil {
			return err
		}
	}
	var failed []string
	for _, c := range rep.Checks {
		if !c.OK {
			failed = append(failed, c.Name)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("selftest: %d of %d checks failed: %s", len(failed), len(rep.Checks), strings.Join(failed, ", "))
	}
	if !o.json {
		_, err = fmt.Fprintf(stdout, "selftest passed: %d checks\n", len(rep.Checks))
	}
	return err
}

func selftestUsageError(msg string) error {
	return fmt.Errorf("%w: %s\n%s", errUsage, msg, selftestUsage)
}

func parseSelftest(args []string, getenv func(string) string, stdout io.Writer) (o selftestOptions, done bool, err error) {
	fs := flag.NewFlagSet("selftest", flag.ContinueOnError)
	fs.StringVar(&o.api, "api", "", "the installation's address")
	fs.StringVar(&o.token, "token", "", "an API token of the installation")
	fs.StringVar(&o.audio, "audio", "", "a recording instead of the bundled sample")
	fs.StringVar(&o.expect, "expect", "", "the words in --audio")
	fs.StringVar(&o.lang, "lang", "", "the language of --audio")
	fs.DurationVar(&o.timeout, "timeout", defaultSelftestTimeout, "the whole run's bound")
	fs.BoolVar(&o.bot, "bot", false, "check the Telegram webhook too")
	fs.BoolVar(&o.json, "json", false, "print one JSON object")
	fs.BoolVar(&o.store, "store", false, "probe the database at YDB_CONNECTION_STRING")
	help := selftestUsage + "\n\nThe flags and the checks: transcriber help, docs/deploy.md (step 4).\n"
	if done, err := parseFlags(fs, args, stdout, help, selftestUsageError); done {
		return o, true, err
	}
	if o.store {
		dsn := getenv("YDB_CONNECTION_STRING")
		if dsn == "" {
			return o, false, errors.New("selftest --store needs the database in YDB_CONNECTION_STRING, and its credentials in the YDB_* variables (docs/configuration.md)")
		}
		o.openScratch = ydbScratch(dsn)
		if o.api == "" && o.token == "" {
			if fs.NArg() > 0 {
				return o, false, selftestUsageError(fmt.Sprintf("selftest takes only flags (got %q too)", fs.Args()))
			}
			return o, false, nil // the store alone
		}
	}
	switch {
	case fs.NArg() > 0:
		return o, false, selftestUsageError(fmt.Sprintf("selftest takes only flags (got %q too)", fs.Args()))
	case o.api == "" || o.token == "":
		return o, false, selftestUsageError("selftest needs --api URL and --token TOKEN (or --store alone)")
	case o.timeout <= 0:
		return o, false, selftestUsageError("selftest --timeout: want a duration such as 5m")
	case (o.audio == "") != (o.expect == ""):
		return o, false, selftestUsageError("selftest: --audio FILE and --expect TEXT go together")
	case o.lang != "" && o.audio == "":
		return o, false, selftestUsageError("selftest: --lang is the language of --audio; the bundled sample is " + sampleLanguage)
	case o.audio != "" && len(words(o.expect)) == 0:
		return o, false, selftestUsageError("selftest --expect: want the words said in --audio")
	}
	if o.api, err = apiBase(o.api); err != nil {
		return o, false, selftestUsageError(err.Error())
	}
	if o.audio == "" {
		o.audioBytes, o.expect, o.lang, o.filename = sampleAudio, sampleText, sampleLanguage, selftestFiles+".ogg"
	} else {
		b, err := os.ReadFile(o.audio)
		if err != nil {
			return o, false, fmt.Errorf("selftest --audio: %w", err)
		}
		if len(b) == 0 {
			return o, false, fmt.Errorf("selftest --audio: %s is empty", o.audio)
		}
		o.audioBytes, o.filename = b, selftestFiles+"-"+filepath.Base(o.audio)
	}
	if o.bot {
		if o.botToken = getenv("TELEGRAM_BOT_TOKEN"); o.botToken == "" {
			return o, false, errors.New("selftest --bot needs the bot's token in TELEGRAM_BOT_TOKEN")
		}
		o.botAPI = strings.TrimRight(cmp.Or(getenv("TELEGRAM_API_URL"), tgconf.DefaultAPIURL), "/")
	}
	return o, false, nil
}

// apiBase is an http(s) URL with a host and at most a path, without a
// trailing slash.
func apiBase(raw string) (string, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("selftest --api: %q is not an address such as https://d5d….apigw.yandexcloud.net (terraform output api_url) or http://127.0.0.1:8080", raw)
	}
	return u.String(), nil
}

type checkResult struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Ms     int64  `json:"ms"`
	Detail string `json:"detail"`
	figure string // the line's figure: its ms, or a count; "" for none
}

type selftestReport struct {
	OK     bool          `json:"ok"`
	Checks []checkResult `json:"checks"`
	// Store is the store probe's calls, with --store.
	Store []storecheck.Call `json:"store,omitempty"`
}

type selftest struct {
	o      selftestOptions
	client *http.Client
	clk    clock.Clock

	mu   sync.Mutex
	jobs []string // the ids of the jobs made, for cleanup
}

func newSelftest(o selftestOptions) *selftest {
	return &selftest{o: o, clk: clock.System(), client: &http.Client{
		Timeout: selftestRequestTimeout,
		// Not followed: X-Api-Key would go along.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// run runs the checks in order, printing each line as it ends. A check
// that cannot run for an earlier one's failure fails and says so; cleanup
// always runs, in the last part of the run's time.
func (s *selftest) run(ctx context.Context, stdout io.Writer) selftestReport {
	start := s.clk.Now()
	reserve := min(20*time.Second, s.o.timeout/4)
	checksCtx, cancelChecks := context.WithDeadline(ctx, start.Add(s.o.timeout-reserve))
	defer cancelChecks()
	// The jobs made are deleted even after Ctrl-C, within the run's time.
	cleanupCtx, cancelCleanup := context.WithDeadline(context.WithoutCancel(ctx), start.Add(s.o.timeout))
	defer cancelCleanup()

	var rep selftestReport
	emit := func(c checkResult) {
		c.Detail = s.scrub(c.Detail)
		rep.Checks = append(rep.Checks, c)
		if !s.o.json {
			fmt.Fprintln(stdout, checkLine(c))
		}
	}

	// Telegram is asked at once, apart from the API: the recognitions may
	// take the run's time.
	webhookDone := make(chan checkResult, 1)
	if s.o.bot {
		go func() { webhookDone <- s.checkWebhook(checksCtx) }()
	}

	if s.o.api == "" {
		c, calls := s.checkStore(checksCtx, cleanupCtx, stdout)
		emit(c)
		rep.Store = calls
		rep.OK = c.OK
		return rep
	}
	apiCheck := s.checkAPI(checksCtx)
	emit(apiCheck)
	if !apiCheck.OK {
		for _, name := range []string{checkUpload, checkAsync, checkSync} {
			emit(skipped(name, "the api check failed"))
		}
	} else {
		up, jobID, putAt := s.checkUpload(checksCtx)
		emit(up)
		if !up.OK {
			emit(skipped(checkAsync, "the upload check failed"))
			emit(skipped(checkSync, "the upload check failed"))
		} else {
			// The fast job runs while the first one is recognized: a timer
			// that never fires leaves time to judge synchronous recognition.
			syncDone := make(chan checkResult, 1)
			go func() { syncDone <- s.checkSync(checksCtx) }()
			emit(s.recognized(checksCtx, checkAsync, jobID, putAt))
			emit(<-syncDone)
		}
	}
	if s.o.bot {
		emit(<-webhookDone)
	}
	if s.o.store {
		c, calls := s.checkStore(checksCtx, cleanupCtx, stdout)
		emit(c)
		rep.Store = calls
	}
	emit(s.cleanup(cleanupCtx))

	rep.OK = true
	for _, c := range rep.Checks {
		rep.OK = rep.OK && c.OK
	}
	return rep
}

func checkLine(c checkResult) string {
	verdict := "PASS"
	if !c.OK {
		verdict = "FAIL"
	}
	return fmt.Sprintf("%s %-17s %11s  %s", verdict, c.Name, cmp.Or(c.figure, "—"), c.Detail)
}

func skipped(name, why string) checkResult {
	return checkResult{Name: name, Detail: "skipped: " + why}
}

// scrub takes the tokens out of a detail: an answer may echo them.
func (s *selftest) scrub(text string) string {
	secrets := []string{s.o.token, s.o.botToken}
	if _, after, ok := strings.Cut(s.o.botToken, ":"); ok {
		secrets = append(secrets, after)
	}
	for _, v := range secrets {
		if len(v) >= 8 {
			text = strings.ReplaceAll(text, v, "[redacted]")
		}
	}
	return text
}

func (s *selftest) since(t time.Time) int64 { return s.clk.Now().Sub(t).Milliseconds() }

func msFigure(ms int64) string { return fmt.Sprintf("%d ms", ms) }

// done is c, begun at start, ended: ok, with its ms (its figure unless it
// has one) and what it found.
func (s *selftest) done(c checkResult, start time.Time, ok bool, format string, a ...any) checkResult {
	c.OK, c.Ms, c.Detail = ok, s.since(start), fmt.Sprintf(format, a...)
	if c.figure == "" {
		c.figure = msFigure(c.Ms)
	}
	return c
}

// How a request names its caller.
type auth int

const (
	noToken auth = iota
	apiKey       // X-Api-Key: what passes API Gateway (docs/api.md, "Authentication")
	bearer       // Authorization: Bearer
)

type answer struct {
	status int
	body   []byte
}

// problem is "HTTP status", with the API's error code and message if any.
func (a answer) problem() string {
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if json.Unmarshal(a.body, &e) == nil && e.Error.Code != "" {
		return fmt.Sprintf("HTTP %d %s (%s)", a.status, e.Error.Code, e.Error.Message)
	}
	return fmt.Sprintf("HTTP %d", a.status)
}

func (s *selftest) call(ctx context.Context, method, path string, body []byte, who auth) (answer, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.o.api+path, rd)
	if err != nil {
		return answer{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch who {
	case apiKey:
		req.Header.Set("X-Api-Key", s.o.token)
	case bearer:
		req.Header.Set("Authorization", "Bearer "+s.o.token)
	}
	return s.send(req)
}

// send's error leaves out the URL, which may carry a signature or token.
func (s *selftest) send(req *http.Request) (answer, error) {
	resp, err := s.client.Do(req)
	if err != nil {
		return answer{}, netProblem(req.Context(), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return answer{}, netProblem(req.Context(), err)
	}
	return answer{status: resp.StatusCode, body: b}, nil
}

var errOutOfTime = errors.New("the run's time ran out")

func netProblem(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return errOutOfTime
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return errors.New(err.Error())
}

// checkAPI: /healthz answers, no token is refused, the token is taken.
// Whether Authorization: Bearer passes (behind API Gateway it may not) is
// said, not judged.
func (s *selftest) checkAPI(ctx context.Context) checkResult {
	start := s.clk.Now()
	fail := func(format string, a ...any) checkResult {
		return s.done(checkResult{Name: checkAPI}, start, false, format, a...)
	}
	a, err := s.call(ctx, http.MethodGet, "/healthz", nil, noToken)
	if err != nil {
		return fail("/healthz: %v: is --api the installation's address (terraform output api_url)? Look at the gateway and the api function's logs", err)
	}
	var health struct{ Status string }
	if a.status != http.StatusOK || json.Unmarshal(a.body, &health) != nil || health.Status != "ok" {
		return fail("/healthz answered %s, not {\"status\": \"ok\"}: is --api the installation's address? Look at the api function's logs", a.problem())
	}
	if a, err = s.call(ctx, http.MethodGet, "/v1/usage", nil, noToken); err != nil {
		return fail("/v1/usage without a token: %v", err)
	}
	if a.status != http.StatusUnauthorized {
		return fail("/v1/usage without a token answered %s, not 401: the API does not check tokens here", a.problem())
	}
	if a, err = s.call(ctx, http.MethodGet, "/v1/usage", nil, apiKey); err != nil {
		return fail("/v1/usage with the token: %v", err)
	}
	switch {
	case a.status == http.StatusUnauthorized:
		return fail("the token was refused (401): make one for this installation (transcriber token create, with its YDB_CONNECTION_STRING); no job was made")
	case a.status != http.StatusOK:
		return fail("/v1/usage with the token answered %s: look at the api function's logs; no job was made", a.problem())
	}
	bearerNote := "Authorization: Bearer is taken too"
	if b, err := s.call(ctx, http.MethodGet, "/v1/usage", nil, bearer); err != nil || b.status != http.StatusOK {
		status := "no answer"
		if err == nil {
			status = b.problem()
		}
		bearerNote = "Authorization: Bearer is not (" + status + "): clients send X-Api-Key"
	}
	return s.done(checkResult{Name: checkAPI}, start, true, "healthz ok; 401 without a token; the token is taken as X-Api-Key; %s", bearerNote)
}

// jobState is what the checks read of a job.
type jobState struct {
	ID          string `json:"id"`
	State       string `json:"state"`
	Recognition string `json:"recognition"`
	Error       *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Upload *struct {
		Method  string            `json:"method"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	} `json:"upload"`
}

func (j jobState) ended() bool {
	return j.State == "done" || j.State == "failed" || j.State == "dead"
}

// createRequest is POST /v1/jobs's body, "reuse": false: each job must
// reach SpeechKit, not an earlier run's transcript.
func (s *selftest) createRequest(priority string) map[string]any {
	req := map[string]any{"filename": s.o.filename, "size_bytes": len(s.o.audioBytes), "reuse": false}
	if s.o.lang != "" {
		req["language"] = s.o.lang
	}
	if priority != "" {
		req["priority"] = priority
	}
	return req
}

// createAndUpload makes a job and PUTs the recording; it returns the job
// and when the PUT ended.
func (s *selftest) createAndUpload(ctx context.Context, priority string) (jobState, time.Time, error) {
	body, err := json.Marshal(s.createRequest(priority))
	if err != nil {
		return jobState{}, time.Time{}, err
	}
	a, err := s.call(ctx, http.MethodPost, "/v1/jobs", body, apiKey)
	if err != nil {
		return jobState{}, time.Time{}, fmt.Errorf("POST /v1/jobs: %w", err)
	}
	var j jobState
	if a.status != http.StatusCreated || json.Unmarshal(a.body, &j) != nil || j.ID == "" || j.Upload == nil || j.Upload.URL == "" {
		return jobState{}, time.Time{}, fmt.Errorf("POST /v1/jobs answered %s: look at the api function's logs", a.problem())
	}
	s.mu.Lock()
	s.jobs = append(s.jobs, j.ID)
	s.mu.Unlock()

	put, err := http.NewRequestWithContext(ctx, cmp.Or(j.Upload.Method, http.MethodPut), j.Upload.URL, bytes.NewReader(s.o.audioBytes))
	if err != nil {
		return j, time.Time{}, fmt.Errorf("job %s: its upload URL is not a URL", j.ID)
	}
	for k, v := range j.Upload.Headers {
		put.Header.Set(k, v)
	}
	pa, err := s.send(put)
	if err != nil {
		return j, time.Time{}, fmt.Errorf("job %s: the PUT to its upload URL: %w", j.ID, err)
	}
	if pa.status/100 != 2 {
		return j, time.Time{}, fmt.Errorf("job %s: Object Storage refused the PUT to its upload URL (HTTP %d): "+
			"look at the presigner's key in Lockbox and its storage.editor role on the data bucket", j.ID, pa.status)
	}
	return j, s.clk.Now(), nil
}

func (s *selftest) job(ctx context.Context, id string) (jobState, error) {
	a, err := s.call(ctx, http.MethodGet, "/v1/jobs/"+id, nil, apiKey)
	if err != nil {
		return jobState{}, err
	}
	var j jobState
	if a.status != http.StatusOK || json.Unmarshal(a.body, &j) != nil {
		return jobState{}, fmt.Errorf("GET /v1/jobs/%s answered %s", id, a.problem())
	}
	return j, nil
}

// waitFor reads the job until done or out of time, and returns the last
// state read; a failed read (a moment's 503) is tried again.
func (s *selftest) waitFor(ctx context.Context, id string, done func(jobState) bool) (jobState, error) {
	var last jobState
	var lastErr error
	for pause := selftestPollFirst; ; pause = min(2*pause, selftestPollMax) {
		j, err := s.job(ctx, id)
		if err == nil {
			last, lastErr = j, nil
			if done(j) {
				return j, nil
			}
		} else if !errors.Is(err, errOutOfTime) {
			lastErr = err
		}
		if clock.Sleep(ctx, pause) != nil {
			if lastErr != nil {
				return last, fmt.Errorf("%w; the last read: %w", errOutOfTime, lastErr)
			}
			return last, errOutOfTime
		}
	}
}

// checkUpload: a job, its file PUT, and the job leaves awaiting_upload
// (the trigger ran ingest); timed from the job's creation.
func (s *selftest) checkUpload(ctx context.Context) (checkResult, string, time.Time) {
	start := s.clk.Now()
	finish := func(ok bool, format string, a ...any) checkResult {
		return s.done(checkResult{Name: checkUpload}, start, ok, format, a...)
	}
	made, putAt, err := s.createAndUpload(ctx, "")
	if err != nil {
		return finish(false, "%v", err), "", time.Time{}
	}
	id := made.ID
	j, err := s.waitFor(ctx, id, func(j jobState) bool { return j.State != "awaiting_upload" })
	switch {
	case err != nil:
		return finish(false, "job %s is still awaiting_upload %s after its upload (%v): no ingest ran; look at the Object Storage trigger "+
			"(sources/ → ingest), its dead-letter queue, the trigger account's functions.functionInvoker role and the ingest function's logs",
			id, time.Duration(s.since(putAt))*time.Millisecond, err), "", time.Time{}
	case j.State == "failed" && j.Error != nil && j.Error.Code == "upload_missing":
		return finish(false, "job %s failed as upload_missing: the upload's event never came; look at the Object Storage trigger", id), "", time.Time{}
	}
	return finish(true, "job %s is %s", id, j.State), id, putAt
}

// checkSync: the recording as a fast job, recognized synchronously.
func (s *selftest) checkSync(ctx context.Context) checkResult {
	start := s.clk.Now()
	j, putAt, err := s.createAndUpload(ctx, "fast")
	if err != nil {
		return s.done(checkResult{Name: checkSync}, start, false, "%s", err)
	}
	return s.recognized(ctx, checkSync, j.ID, putAt)
}

// recognized waits for a job to end and judges it: done, minWordShare of
// the expected words, and for recognition-sync synchronously; timed from
// the upload to the transcript in hand.
func (s *selftest) recognized(ctx context.Context, name, id string, putAt time.Time) checkResult {
	finish := func(ok bool, format string, a ...any) checkResult {
		return s.done(checkResult{Name: name}, putAt, ok, format, a...)
	}
	j, err := s.waitFor(ctx, id, jobState.ended)
	if err != nil {
		return finish(false, "job %s is still %s (%v): %s", id, orUnknown(j.State), err, cmp.Or(stuckHints[j.State], lookAtLogs))
	}
	if j.State != "done" {
		code, msg := "", ""
		if j.Error != nil {
			code, msg = j.Error.Code, j.Error.Message
		}
		return finish(false, "job %s ended %s: %s (%s): %s", id, j.State, code, msg, cmp.Or(failureHints[code], lookAtLogs))
	}
	a, err := s.call(ctx, http.MethodGet, "/v1/jobs/"+id+"/transcript?format=txt", nil, apiKey)
	if err != nil {
		return finish(false, "job %s is done; its transcript: %v", id, err)
	}
	if a.status != http.StatusOK {
		return finish(false, "job %s is done; its transcript answered %s: look at the api function's logs and its storage.viewer role", id, a.problem())
	}
	got, want := heard(string(a.body), s.o.expect)
	share := 0
	if want > 0 {
		share = got * 100 / want
	}
	if share < minWordShare {
		return finish(false, "job %s is done, but its transcript holds %d of the %d expected words (%d %%, under %d %%): %q; "+
			"is the recording in the job's language (--lang)?", id, got, want, share, minWordShare, clip(string(a.body), 120))
	}
	if name == checkSync && j.Recognition != "sync" {
		return finish(false, "job %s is done, but recognized %q, not synchronously: SpeechKit's synchronous API refused it or it is off "+
			"(SPEECHKIT_SYNC_MAX_DURATION, SPEECHKIT_SYNC_URL; a recording over 30 s or of more than one channel); look at the ingest function's logs",
			id, orUnknown(j.Recognition))
	}
	return finish(true, "job %s done (%s), %d of %d expected words in its transcript", id, orUnknown(j.Recognition), got, want)
}

func orUnknown(s string) string { return cmp.Or(s, "unknown") }

const lookAtLogs = "look at the ingest and poll functions' logs under the job id"

// stuckHints say where to look for a job still in a state at the end.
var stuckHints = map[string]string{
	"created": "its conversion has not ended; look at the ingest function's logs (ffmpeg) and transcriber status",
	"converted": "it was not sent to SpeechKit: it waits for the request window, or SpeechKit refused it and it is tried again; " +
		"transcriber status says which; " + lookAtLogs,
	"transcribe": "SpeechKit has it, or refused it and it is tried again; the poll function's timer looks every minute: " +
		"look at the poll function's logs under the job id, the timer trigger, and transcriber status",
	"awaiting_upload": "its upload's event never came; look at the Object Storage trigger",
}

// failureHints say what a job's error code asks for.
var failureHints = map[string]string{
	"speechkit_access_denied":    "SpeechKit refused the installation's credentials: the functions' service accounts need ai.speechkit-stt.user (terraform/iam.tf)",
	"recognition_not_configured": "the installation has no SpeechKit credentials (SPEECHKIT_API_KEY for the local stack)",
	"speechkit_unavailable":      "SpeechKit failed every attempt; " + lookAtLogs,
	"recognition_failed":         "SpeechKit failed every attempt; " + lookAtLogs,
	"unsupported_media":          "the recording itself was refused; check --audio",
	"unreadable_media":           "the recording itself was refused; check --audio",
	"no_audio_stream":            "the recording itself was refused; check --audio",
	"empty_file":                 "the recording itself was refused; check --audio",
	"quota_exceeded":             "the installation's audio limits (GET /v1/usage, LIMIT_AUDIO_PER_DAY, LIMIT_AUDIO_PER_MONTH)",
}

// words are text's words, lower-cased, ё as е.
func words(text string) []string {
	text = strings.ReplaceAll(strings.ToLower(text), "ё", "е")
	return strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// heard counts the expected words the transcript holds, each heard once.
func heard(transcript, expected string) (got, want int) {
	have := map[string]int{}
	for _, w := range words(transcript) {
		have[w]++
	}
	exp := words(expected)
	for _, w := range exp {
		if have[w] > 0 {
			have[w]--
			got++
		}
	}
	return got, len(exp)
}

// clip is text on one line, at most n runes.
func clip(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > n {
		return string(r[:n]) + "…"
	}
	return text
}

// checkWebhook: the bot's webhook is this installation's, with no
// delivery error; its figure is the updates waiting.
func (s *selftest) checkWebhook(ctx context.Context) checkResult {
	start := s.clk.Now()
	c := checkResult{Name: checkWebhook}
	finish := func(ok bool, format string, a ...any) checkResult { return s.done(c, start, ok, format, a...) }
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.o.botAPI+"/bot"+s.o.botToken+"/getWebhookInfo", nil)
	if err != nil {
		return finish(false, "TELEGRAM_API_URL is not a URL")
	}
	a, err := s.send(req)
	if err != nil {
		return finish(false, "getWebhookInfo: %v", err)
	}
	var r struct {
		OK          bool   `json:"ok"`
		Description string `json:"description"`
		Result      struct {
			URL                string `json:"url"`
			PendingUpdateCount int    `json:"pending_update_count"`
			LastErrorDate      int64  `json:"last_error_date"`
			LastErrorMessage   string `json:"last_error_message"`
		} `json:"result"`
	}
	if json.Unmarshal(a.body, &r) != nil {
		return finish(false, "getWebhookInfo answered HTTP %d, not the Bot API's JSON: is TELEGRAM_API_URL right?", a.status)
	}
	if !r.OK {
		if a.status == http.StatusUnauthorized || a.status == http.StatusNotFound {
			return finish(false, "Telegram does not know TELEGRAM_BOT_TOKEN (HTTP %d %s)", a.status, r.Description)
		}
		return finish(false, "getWebhookInfo answered HTTP %d %s", a.status, r.Description)
	}
	want := s.o.api + "/telegram/webhook"
	w := r.Result
	c.figure = fmt.Sprintf("%d pending", w.PendingUpdateCount)
	switch {
	case w.URL == "":
		return finish(false, "the bot has no webhook: it gets no updates; terraform apply registers it (terraform_data.webhook)")
	case w.URL != want:
		return finish(false, "the bot's webhook is %s, not this installation's %s: another installation or a test took the bot; "+
			"terraform apply -replace=terraform_data.webhook registers it again", w.URL, want)
	case w.LastErrorMessage != "":
		at := "at an unknown time"
		if w.LastErrorDate > 0 {
			at = "at " + time.Unix(w.LastErrorDate, 0).UTC().Format("2006-01-02 15:04:05 UTC")
		}
		return finish(false, "Telegram's last delivery to the webhook failed %s: %q; %d updates wait; look at the gateway and the telegram function's logs",
			at, w.LastErrorMessage, w.PendingUpdateCount)
	}
	return finish(true, "the webhook is %s, no delivery error, %d updates wait", w.URL, w.PendingUpdateCount)
}

// cleanup deletes the run's jobs.
func (s *selftest) cleanup(ctx context.Context) checkResult {
	start := s.clk.Now()
	s.mu.Lock()
	ids := append([]string(nil), s.jobs...)
	s.mu.Unlock()
	c := checkResult{Name: checkCleanup, OK: true}
	var problems []string
	for _, id := range ids {
		a, err := s.call(ctx, http.MethodDelete, "/v1/jobs/"+id, nil, apiKey)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("job %s: %v", id, err))
		case a.status != http.StatusOK:
			problems = append(problems, fmt.Sprintf("job %s: %s", id, a.problem()))
		}
	}
	c.Ms = s.since(start)
	switch {
	case len(problems) > 0:
		c.OK = false
		c.Detail = fmt.Sprintf("%d of %d jobs not deleted (%s): delete them with DELETE /v1/jobs/{id}", len(problems), len(ids),
			strings.Join(problems, "; "))
	case len(ids) == 0:
		c.Detail = "no job was made"
	default:
		c.Detail = fmt.Sprintf("%d jobs deleted", len(ids))
	}
	return c
}
