package callback

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"transcriber/internal/apitoken"
	"transcriber/internal/clock"
	"transcriber/internal/ident"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
)

// A failed POST is tried again after a pause doubling from FirstPause up
// to MaxPause, until GiveUpAfter from the first.
const (
	FirstPause  = 30 * time.Second
	MaxPause    = time.Hour
	GiveUpAfter = 24 * time.Hour
)

const (
	// lease covers one POST (Timeout) and recording it.
	lease = Timeout + 20*time.Second
	// checkEvery: a delivery is due this long after it is put or found its
	// job unfinished, the net under a lost notification.
	checkEvery = 15 * time.Minute
	// sweepBudget: a sweep takes no delivery with less left than the
	// lease and this.
	sweepBudget = 5 * time.Second
)

type Tokens interface {
	ByHash(ctx context.Context, hash string) (apitoken.Token, error)
}

// Sender posts API jobs' callbacks: a pipeline Notifier, and the timer's
// Sweep for retries and lost notifications.
type Sender struct {
	Store  outbox.Store
	Jobs   outbox.Jobs
	Tokens Tokens
	View   func(job.Job) any // the payload's data, as GET /v1/jobs/{id} shows it
	Client *http.Client
	Clock  clock.Clock
	Log    *slog.Logger
}

// Register puts the callback of job j, made by tok, to url (CheckURL
// passed); a retried request finds the first.
func (s *Sender) Register(ctx context.Context, j job.Job, tok apitoken.Token, url string) (Delivery, error) {
	now := s.Clock.Now()
	p, err := Target{URL: url, TokenHash: tok.Hash, WebhookID: "msg_" + ident.NewAt(now)}.payload()
	if err != nil {
		return Delivery{}, fmt.Errorf("register callback of job %s: %w", j.ID, err)
	}
	e, _, err := s.Store.Put(ctx, outbox.Entry{Kind: outbox.Callback, Key: j.ID, JobID: j.ID, Payload: p}, now.Add(checkEvery), now)
	return DeliveryOf(e), err
}

// Moved does nothing: callbacks tell only that a job ended.
func (s *Sender) Moved(context.Context, job.Job) error { return nil }

// Finished sends the callback of an ended API job, if it has one; a failed
// POST is left to the sweep.
func (s *Sender) Finished(ctx context.Context, j job.Job) error {
	if j.Source != job.SourceAPI || !j.State.Terminal() {
		return nil
	}
	e, taken, err := s.Store.Begin(ctx, outbox.Entry{Kind: outbox.Callback, Key: j.ID, JobID: j.ID}, s.Clock.Now(), lease)
	if errors.Is(err, outbox.ErrNotFound) || (err == nil && !taken) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = s.deliver(ctx, j, DeliveryOf(e))
	return err
}

func (s *Sender) box() outbox.Sender {
	return outbox.Sender{Store: s.Store, Kind: outbox.Callback, Now: s.Clock.Now, Lease: lease, Log: s.Log}
}

// Sweep sends the due callbacks: retries, and those whose job's end was
// never notified. It returns how many were delivered.
func (s *Sender) Sweep(ctx context.Context) (int, error) {
	box := s.box()
	return box.Sweep(ctx, sweepBudget, func(ctx context.Context, e outbox.Entry) (bool, error) {
		j, ok, err := box.Job(ctx, s.Jobs, e)
		if !ok {
			return false, err
		}
		if !j.State.Terminal() {
			box.Retry(ctx, e.Key, checkEvery)
			return false, nil
		}
		ok, err = s.deliver(ctx, j, DeliveryOf(e))
		if err != nil {
			s.Log.WarnContext(ctx, "callback not delivered", "job_id", j.ID, "error", err.Error())
		}
		return ok, nil
	})
}

// deliver POSTs ended job j's callback under d, held, and records the
// outcome.
func (s *Sender) deliver(ctx context.Context, j job.Job, d Delivery) (bool, error) {
	log, box := s.Log.With("job_id", j.ID, "webhook_id", d.WebhookID), s.box()
	if j.Deleted() {
		log.InfoContext(ctx, "callback given up", "reason", "job_deleted")
		box.Finish(ctx, d.Key, outbox.Outcome{State: outbox.Failed})
		return false, nil
	}
	tok, err := s.Tokens.ByHash(ctx, d.TokenHash)
	if err != nil && !errors.Is(err, apitoken.ErrNotFound) {
		box.Retry(ctx, d.Key, time.Minute)
		return false, err
	}
	key, kerr := Key(tok.CallbackSecret)
	if err != nil || tok.Revoked() || kerr != nil {
		log.InfoContext(ctx, "callback given up", "reason", "token_unusable")
		box.Finish(ctx, d.Key, outbox.Outcome{State: outbox.Failed})
		return false, nil
	}
	typ, ended := "job.done", j.EndedAt
	if j.State != job.Done {
		typ = "job.failed"
	}
	if ended.IsZero() {
		ended = j.UpdatedAt
	}
	body, err := json.Marshal(struct {
		Type      string    `json:"type"`
		Timestamp time.Time `json:"timestamp"` // when the job ended
		Data      any       `json:"data"`
	}{typ, ended.UTC(), s.View(j)})
	if err != nil {
		box.Finish(ctx, d.Key, outbox.Outcome{State: outbox.Failed})
		return false, fmt.Errorf("callback payload of job %s: %w", j.ID, err)
	}
	at := s.Clock.Now()
	status, code := s.post(ctx, d, key, body, at)
	a := &outbox.Attempt{At: at, Status: status, Error: code}
	if code == "" {
		log.InfoContext(ctx, "callback delivered", "status", status, "attempt", d.Attempts+1)
		box.Finish(ctx, d.Key, outbox.Outcome{State: outbox.Delivered, Attempt: a})
		return true, nil
	}
	first := d.FirstAt
	if first.IsZero() {
		first = at
	}
	next := at.Add(Pause(d.Attempts + 1))
	if next.Sub(first) > GiveUpAfter {
		log.WarnContext(ctx, "callback given up", "status", status, "reason", code, "attempts", d.Attempts+1)
		box.Finish(ctx, d.Key, outbox.Outcome{State: outbox.Failed, Attempt: a})
	} else {
		box.Finish(ctx, d.Key, outbox.Outcome{State: outbox.Pending, NextAt: next, Attempt: a})
	}
	if status != 0 { // never the URL, whose query may carry a client's secret
		return false, fmt.Errorf("callback answered %d", status)
	}
	return false, errors.New("callback failed: " + code)
}

// Pause is the wait after the n-th failed attempt (n from 1).
func Pause(n int) time.Duration {
	return min(FirstPause<<min(max(n-1, 0), 8), MaxPause) // 8 doublings pass MaxPause
}

// post returns the answer's status and, but for a 2xx, a snake_case code.
func (s *Sender) post(ctx context.Context, d Delivery, key, body []byte, at time.Time) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(body))
	if err != nil {
		return 0, "bad_url"
	}
	ts := at.Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "transcriber-callbacks")
	req.Header.Set("webhook-id", d.WebhookID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", Sign(key, d.WebhookID, ts, body))
	resp, err := s.Client.Do(req)
	if err != nil {
		return 0, failure(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponseBytes))
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return resp.StatusCode, ""
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return resp.StatusCode, "redirect_not_followed"
	}
	return resp.StatusCode, "status_not_2xx"
}

// failure is the code of a POST that got no answer.
func failure(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, errRefusedAddress):
		return "address_refused"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	return "connection_failed"
}

// Get returns a job's callback: outbox.ErrNotFound when it has none.
func (s *Sender) Get(ctx context.Context, jobID string) (Delivery, error) {
	e, err := s.Store.Get(ctx, outbox.Callback, jobID)
	return DeliveryOf(e), err
}
