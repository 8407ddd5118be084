package speechkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"transcriber/internal/errs"
	"transcriber/internal/ident"
	"transcriber/internal/media/oggopus"
	"transcriber/internal/spend"
	"transcriber/internal/transcript"
)

// Synchronous recognition, REST API v1 (speechkit/stt/api/request-api.md):
// one POST with the audio, one text back; no word timings, speakers or
// summary. Its quota, 20 requests a second, is apart from asynchronous
// recognition's 500 an hour (speechkit/concepts/limits.md).

const (
	DefaultSyncURL = "https://stt.api.cloud.yandex.net/speech/v1/stt:recognize"
	// DefaultSyncTimeout is twice the ~5 s 30 s of audio takes asynchronously.
	DefaultSyncTimeout = 10 * time.Second
	// SyncBillingHeader states the billed seconds (speechkit/stt/api/request-examples.md).
	SyncBillingHeader = "YaCloud-Billing-Units"
)

// The documented limits (speechkit/stt/request.md), checked before sending.
const (
	MaxSyncBytes    = 1_000_000 // "1 MB": 10^6 or 2^20 is not documented, so the smaller
	MaxSyncDuration = 30 * time.Second
	SyncChannels    = 1
)

const (
	maxSyncAnswer   = 64 << 10 // ten times the longest text 30 s of speech makes, all \u-escaped
	maxSyncError    = 4 << 10
	maxErrorQuoted  = 200
	maxBilledHeader = 2 * 30 // a header past twice 30 s is not about this request
)

// SyncRequest is one short recording to recognize synchronously.
type SyncRequest struct {
	Audio []byte // Ogg Opus (the API takes LPCM too), at most MaxSyncBytes, one channel
	// DurationMs is the length the caller knows; the client also counts the
	// audio and takes the larger.
	DurationMs int64
	Language   string // not AutoLanguage (undocumented here); empty is DefaultLanguage
}

// SyncResult is a synchronous recognition's answer.
type SyncResult struct {
	Text       string // empty without speech
	DurationMs int64  // the larger of declared and counted
	// BilledSeconds is the billing header when believable, else
	// spend.SyncBilledSeconds of DurationMs.
	BilledSeconds int64
}

// Transcript is one utterance over the audio, with the billed seconds.
func (r SyncResult) Transcript() transcript.Transcript {
	t := transcript.FromText(r.Text, r.DurationMs)
	t.BilledSeconds = r.BilledSeconds
	return t
}

const (
	CodeSyncQuota = "sync_quota" // 429 (errs.Unavailable)
	// CodeSyncUnfit: the recording does not fit the synchronous API;
	// errs.Invalid when refused here, errs.Permanent for SpeechKit's 400 or 413.
	CodeSyncUnfit = "sync_unfit"

	msgSyncQuota = "the speech recognizer's quota of quick requests is used up for this moment"
	msgSyncUnfit = "the recording does not fit quick recognition (at most 30 s, 1 MB, one channel, OggOpus)"
)

// syncUnfit is a local refusal; why goes into the cause.
func syncUnfit(why string, args ...any) error {
	return errs.Wrap(fmt.Errorf("not sent to synchronous recognition: "+why, args...), errs.Invalid, CodeSyncUnfit, msgSyncUnfit)
}

// syncAnswer is the API's JSON (speechkit/concepts/response.md).
type syncAnswer struct {
	Result       *string `json:"result"`
	ErrorCode    string  `json:"error_code"`
	ErrorMessage string  `json:"error_message"`
}

// RecognizeSync recognizes a short recording in one request. What does not
// fit the limits, its length counted from the audio too, is not sent
// (CodeSyncUnfit). Whatever the error, the recording can go asynchronous.
func (c *Client) RecognizeSync(ctx context.Context, r SyncRequest) (SyncResult, error) {
	if c.closed.Load() {
		return SyncResult{}, errs.Wrap(errClosed, errs.Internal, codeInternal, "")
	}
	query, durationMs, err := c.syncQuery(r)
	if err != nil {
		return SyncResult{}, err
	}
	auth, folder, err := c.credentials(ctx)
	if err != nil {
		return SyncResult{}, err
	}
	if folder != "" {
		query.Set("folderId", folder)
	}
	u := *c.syncURL
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(r.Audio))
	if err != nil {
		return SyncResult{}, errs.Wrap(c.auth.redact(err), errs.Internal, codeInternal, "")
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("x-client-request-id", ident.New())
	resp, err := c.http.Do(req)
	if err != nil {
		return SyncResult{}, errs.Wrap(c.auth.redact(err), errs.Unavailable, CodeUnavailable, msgUnavailable)
	}
	defer func() { _ = resp.Body.Close() }()
	return c.syncAnswer(resp, durationMs)
}

// syncAnswer reads an answer to a request for durationMs of audio.
func (c *Client) syncAnswer(resp *http.Response, durationMs int64) (SyncResult, error) {
	if resp.StatusCode != http.StatusOK {
		return SyncResult{}, c.syncRefusal(resp)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSyncAnswer+1))
	if err != nil {
		return SyncResult{}, errs.Wrap(c.auth.redact(err), errs.Unavailable, CodeUnavailable, msgUnavailable)
	}
	if len(body) > maxSyncAnswer {
		return SyncResult{}, errs.Wrap(fmt.Errorf("the synchronous answer is over %d bytes", maxSyncAnswer),
			errs.Permanent, CodeAnswerTooLarge, msgAnswerLarge)
	}
	var a syncAnswer
	if err := json.Unmarshal(body, &a); err != nil || a.Result == nil {
		return SyncResult{}, errs.Wrap(errors.New("the synchronous answer is not {\"result\": text}"), errs.Internal, codeInternal, "")
	}
	billed, ok := billedHeader(resp.Header.Values(SyncBillingHeader))
	if !ok {
		billed = spend.SyncBilledSeconds(durationMs, SyncChannels)
	}
	return SyncResult{Text: *a.Result, DurationMs: durationMs, BilledSeconds: billed}, nil
}

// syncQuery checks r and returns its query, the configured URL's
// parameters under its own, and the audio's length.
func (c *Client) syncQuery(r SyncRequest) (url.Values, int64, error) {
	switch {
	case len(r.Audio) == 0:
		return nil, 0, errs.New(errs.Invalid, CodeNoAudio, "there is no audio to recognize")
	case len(r.Audio) > MaxSyncBytes:
		return nil, 0, syncUnfit("%d bytes, over %d", len(r.Audio), MaxSyncBytes)
	case r.DurationMs > MaxSyncDuration.Milliseconds():
		return nil, 0, syncUnfit("declared %d ms long, over %d", r.DurationMs, MaxSyncDuration.Milliseconds())
	}
	lang, model, err := c.languageModel(r.Language, "")
	if err != nil {
		return nil, 0, err
	}
	if lang == AutoLanguage {
		return nil, 0, syncUnfit("language detection is not documented for the synchronous API")
	}
	counted, err := countOggOpus(r.Audio)
	if err != nil {
		return nil, 0, err
	}
	q := c.syncURL.Query()
	q.Set("lang", lang)
	q.Set("topic", model)
	q.Set("format", "oggopus")
	return q, max(r.DurationMs, counted), nil
}

// countOggOpus counts a mono Ogg Opus stream by its packets.
func countOggOpus(b []byte) (int64, error) {
	switch ch, err := oggopus.Channels(b); {
	case err != nil:
		return 0, syncUnfit("not an Ogg Opus stream: %w", err)
	case ch != SyncChannels:
		return 0, syncUnfit("%d channels; the API takes %d", ch, SyncChannels)
	}
	m := &oggopus.Meter{LimitMs: MaxSyncDuration.Milliseconds()}
	_, err := m.Write(b)
	if err == nil {
		err = m.Close()
	}
	if err != nil {
		return 0, syncUnfit("the Ogg Opus stream: %w", err)
	}
	return m.Ms(), nil
}

// billedHeader believes only one value of whole seconds, a positive
// multiple of the 15-second unit, at most maxBilledHeader (not the older
// docs' "1", which would be units).
func billedHeader(values []string) (int64, bool) {
	if len(values) != 1 {
		return 0, false
	}
	v := strings.TrimSpace(values[0])
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil && strings.Trim(v, "0123456789") == "" && n > 0 && n%spend.SyncUnitSeconds == 0 && n <= maxBilledHeader
}

// syncRefusal classifies a non-200 answer by status; the API's code and
// message go into the cause only, scrubbed and cut.
func (c *Client) syncRefusal(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxSyncError))
	var a syncAnswer
	_ = json.Unmarshal(body, &a) // not JSON: the status alone classifies
	// Scrub before the cut, which could leave part of a secret.
	cause := fmt.Errorf("synchronous recognition answered %d: %s %s",
		resp.StatusCode, quoted(c.auth.Scrub(a.ErrorCode)), cut(c.auth.Scrub(a.ErrorMessage), maxErrorQuoted))
	switch s := resp.StatusCode; {
	case s == http.StatusTooManyRequests:
		return errs.Wrap(cause, errs.Unavailable, CodeSyncQuota, msgSyncQuota)
	case s == http.StatusBadRequest, s == http.StatusRequestEntityTooLarge:
		return errs.Wrap(cause, errs.Permanent, CodeSyncUnfit, msgSyncUnfit)
	case s == http.StatusUnauthorized, s == http.StatusForbidden:
		return errs.Wrap(cause, errs.Unavailable, CodeAccessDenied, msgAccessDenied)
	case s == http.StatusRequestTimeout, s >= 500 && s <= 599:
		return errs.Wrap(cause, errs.Unavailable, CodeUnavailable, msgUnavailable)
	default:
		return errs.Wrap(cause, errs.Internal, codeInternal, "")
	}
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// NewHTTPClient is the client of the REST APIs (also Translate): TLS 1.2+,
// and no redirect, so credentials go only where the configured URL says.
func NewHTTPClient(timeout time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = tlsConfig()
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &http.Client{Transport: t, Timeout: timeout, CheckRedirect: noRedirect}
}

// CheckSyncURL reports whether New takes raw: https with a host and no user
// information, or http with insecure. The error never quotes raw.
func CheckSyncURL(raw string, insecure bool) error {
	_, err := parseSyncURL(raw, insecure)
	return err
}

func parseSyncURL(raw string, insecure bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || u.Opaque != "":
		return nil, errors.New("speechkit: the synchronous recognition URL is not a valid URL")
	case u.User != nil:
		return nil, errors.New("speechkit: the synchronous recognition URL must not hold credentials")
	case u.Scheme == "https", u.Scheme == "http" && insecure:
		return u, nil
	case u.Scheme == "http":
		return nil, errors.New("speechkit: the synchronous recognition URL is http: want https (http only with SPEECHKIT_INSECURE)")
	default:
		return nil, errors.New("speechkit: the synchronous recognition URL is not an http(s) URL")
	}
}
