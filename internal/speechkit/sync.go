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

// Synchronous recognition, SpeechKit's REST API v1
// (speechkit/stt/api/request-api.md): one POST with the audio as its body,
// the text in the answer. It is made for short recordings, voice messages
// among them (speechkit/stt/request.md), and has a quota of its own, 20
// requests a second, apart from asynchronous recognition's 500 an hour
// (speechkit/concepts/limits.md). It gives no word timings, no speakers and
// no summary: one text for the whole audio.

// DefaultSyncURL is the synchronous recognition endpoint.
const DefaultSyncURL = "https://stt.api.cloud.yandex.net/speech/v1/stt:recognize"

// The limits of a synchronous request (speechkit/stt/request.md, "Audio
// requirements"; the same in concepts/limits.md), checked here before
// anything is sent.
const (
	// MaxSyncBytes is the largest body: "Maximum file size: 1 MB". Whether
	// that MB is 10^6 or 2^20 bytes is not documented, so the smaller.
	MaxSyncBytes = 1_000_000
	// MaxSyncDuration is the longest audio: "Maximum length: 30 seconds".
	MaxSyncDuration = 30 * time.Second
	// SyncChannels is the most channels: "Maximum number of audio
	// channels: 1".
	SyncChannels = 1
)

// DefaultSyncTimeout bounds one synchronous request, sending, waiting and
// reading included. SpeechKit states no response time for it; asynchronous
// recognition takes about 10 s a minute of mono audio
// (speechkit/stt/transcribation.md), so 30 s of audio about 5 s, and the
// timeout is twice that. A request that outlasts it is given up and the
// caller recognizes the audio asynchronously.
const DefaultSyncTimeout = 10 * time.Second

// SyncBillingHeader is the answer's header that states what the request
// was billed, in seconds (speechkit/stt/api/request-examples.md: "HTTP/1.1
// 200 OK", "YaCloud-Billing-Units: 15").
const SyncBillingHeader = "YaCloud-Billing-Units"

const (
	// maxSyncAnswer bounds the answer read on success. The longest text
	// 30 s of speech makes is about 120 words at a fast 4 a second, some
	// 1,000 characters: 2 KB of Cyrillic in UTF-8, 6 KB were every letter
	// sent as a JSON \u escape. 64 KiB is ten times that and still little
	// to hold; an answer past it is not a recognition of 30 s.
	maxSyncAnswer = 64 << 10
	// maxSyncError bounds an error answer read: {"error_code",
	// "error_message"} is a line of text.
	maxSyncError = 4 << 10
	// maxErrorQuoted bounds the part of an error answer's message kept in
	// the error's cause, for logs.
	maxErrorQuoted = 200
	// maxBilledHeader is the most seconds a billing header is believed
	// for: a request holds at most 30 s of one channel, billed 30 by
	// SpeechKit's rule, and a header past twice that is not a statement
	// about this request. It falls back on the rule.
	maxBilledHeader = 2 * 30
)

// SyncFormat is the audio format of a synchronous request (the format
// parameter).
type SyncFormat string

// The formats synchronous recognition takes.
const (
	// SyncOggOpus is Opus in an Ogg container, as Telegram voice notes
	// are; the API's default.
	SyncOggOpus SyncFormat = "oggopus"
	// SyncLPCM is raw PCM without a header: 16-bit signed little-endian
	// samples, one channel, at SyncRequest.SampleRateHertz
	// (speechkit/formats.md, "LPCM").
	SyncLPCM SyncFormat = "lpcm"
)

// DefaultSyncSampleRate is the LPCM sample rate when a request names none,
// the API's own default.
const DefaultSyncSampleRate = 48000

// syncSampleRates are the LPCM rates the API takes (sampleRateHertz).
var syncSampleRates = map[int]bool{8000: true, 16000: true, 48000: true}

// SyncRequest is one short recording to recognize synchronously.
type SyncRequest struct {
	// Audio is the whole recording, at most MaxSyncBytes, one channel.
	Audio []byte
	// Format is the audio's format; empty means SyncOggOpus.
	Format SyncFormat
	// SampleRateHertz is LPCM's sample rate: 8000, 16000 or 48000; 0
	// means DefaultSyncSampleRate. Ignored for OggOpus, whose stream says.
	SampleRateHertz int
	// DurationMs is the audio's length as the caller knows it (the probe,
	// the media meter). Audio declared longer than MaxSyncDuration is not
	// sent; the client also counts the audio itself and takes the larger.
	DurationMs int64
	// Language is a code ValidLanguage accepts, but not AutoLanguage: the
	// synchronous API documents no language detection. Empty means
	// DefaultLanguage.
	Language string
	// Model is the recognition model (the topic parameter); empty means the
	// client's Config.Model.
	Model string
}

// SyncResult is a synchronous recognition's answer.
type SyncResult struct {
	// Text is what was recognized in the whole audio; empty when there was
	// no speech.
	Text string
	// DurationMs is the audio's length: the larger of what the request
	// declared and what the client counted in the audio.
	DurationMs int64
	// BilledSeconds is what the request was billed: the answer's
	// YaCloud-Billing-Units when it is a whole number of 15-second units
	// of at most 60 s (BilledFromHeader), otherwise SpeechKit's rule,
	// spend.SyncBilledSeconds of DurationMs for one channel.
	BilledSeconds    int64
	BilledFromHeader bool
}

// Transcript is the result as a transcript: one utterance over the audio
// (transcript.FromText), with the billed seconds.
func (r SyncResult) Transcript() transcript.Transcript {
	t := transcript.FromText(r.Text, r.DurationMs)
	t.BilledSeconds = r.BilledSeconds
	return t
}

// The codes of synchronous recognition's own errors; the others are the
// package's (CodeUnavailable, CodeAccessDenied, CodeAnswerTooLarge,
// CodeNoAudio, CodeUnsupportedLanguage).
const (
	// CodeSyncQuota (errs.Unavailable): SpeechKit answered 429, the
	// synchronous quota of 20 requests a second is used up. No fault of
	// the recording's.
	CodeSyncQuota = "sync_quota"
	// CodeSyncUnfit (errs.Invalid when refused here, errs.Permanent when
	// SpeechKit refused it): the recording does not fit the
	// synchronous API, so sending it again will not help. Refused here
	// (over 1 MB, over 30 s declared or counted, more than one channel, a
	// format or sample rate the API does not take, a stream that is not
	// the format it says, language detection asked for), or by SpeechKit's
	// 400 or 413. The recording may still be recognized asynchronously.
	CodeSyncUnfit = "sync_unfit"
)

const (
	msgSyncQuota = "the speech recognizer's quota of quick requests is used up for this moment"
	msgSyncUnfit = "the recording does not fit quick recognition (at most 30 s, 1 MB, one channel, OggOpus or LPCM)"
)

// syncUnfit is a local refusal, refused before anything is sent (errs.
// Invalid, where SpeechKit's own 400 is errs.Permanent): why goes into the
// cause, for logs.
func syncUnfit(why string, args ...any) error {
	return errs.Wrap(fmt.Errorf("not sent to synchronous recognition: "+why, args...), errs.Invalid, CodeSyncUnfit, msgSyncUnfit)
}

// syncAnswer is the API's answer: {"result": "<text>"} on success,
// {"error_code", "error_message"} on failure (speechkit/concepts/response.md).
type syncAnswer struct {
	Result       *string `json:"result"`
	ErrorCode    string  `json:"error_code"`
	ErrorMessage string  `json:"error_message"`
}

// RecognizeSync recognizes a short recording in one request and returns
// its text. Nothing is sent for a recording that does not fit the API
// (CodeSyncUnfit): the request is checked against the documented limits
// first, the audio's length counted from the audio itself (an Ogg Opus
// stream's packets, or LPCM's bytes) as well as taken from the request.
//
// It authenticates as the asynchronous client does: "Api-Key <key>" with
// an API key, else "Bearer <IAM token>" with the folderId parameter when
// Config.FolderID is set. The answer is read up to 64 KiB; redirects are
// not followed.
//
// Errors:
//   - errs.Unavailable CodeSyncQuota: 429, the quota of the second is used;
//   - errs.Unavailable CodeUnavailable: a 5xx or 408 answer, a time-out
//     (Config.SyncTimeout, or ctx), a transport error;
//   - errs.Unavailable CodeAccessDenied: 401 or 403;
//   - errs.Invalid CodeSyncUnfit: refused here, nothing sent;
//   - errs.Permanent CodeSyncUnfit: SpeechKit's 400 or 413;
//   - errs.Permanent CodeAnswerTooLarge: a success answer over 64 KiB;
//   - errs.Invalid CodeNoAudio, CodeUnsupportedLanguage: as Submit;
//   - errs.Internal: any other answer, or one that is not the API's JSON.
//
// Whatever the error, the recording can go the asynchronous way.
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
	all := u.Query() // the configured URL's own parameters, under the request's
	for k, v := range query {
		all[k] = v
	}
	u.RawQuery = all.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(r.Audio))
	if err != nil {
		return SyncResult{}, errs.Wrap(c.redact(err), errs.Internal, codeInternal, "")
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("x-client-request-id", ident.New())
	resp, err := c.http.Do(req)
	if err != nil {
		return SyncResult{}, errs.Wrap(c.redact(err), errs.Unavailable, CodeUnavailable, msgUnavailable)
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
		return SyncResult{}, errs.Wrap(c.redact(err), errs.Unavailable, CodeUnavailable, msgUnavailable)
	}
	if len(body) > maxSyncAnswer {
		return SyncResult{}, errs.Wrap(fmt.Errorf("the synchronous answer is over %d bytes", maxSyncAnswer),
			errs.Permanent, CodeAnswerTooLarge, msgAnswerLarge)
	}
	var a syncAnswer
	if err := json.Unmarshal(body, &a); err != nil || a.Result == nil {
		return SyncResult{}, errs.Wrap(errors.New("the synchronous answer is not {\"result\": text}"), errs.Internal, codeInternal, "")
	}
	res := SyncResult{Text: *a.Result, DurationMs: durationMs}
	if n, ok := billedHeader(resp.Header.Values(SyncBillingHeader)); ok {
		res.BilledSeconds, res.BilledFromHeader = n, true
	} else {
		res.BilledSeconds = spend.SyncBilledSeconds(durationMs, SyncChannels)
	}
	return res, nil
}

// syncQuery checks r against the API's limits and returns the query
// parameters of its request and the audio's length: the larger of what r
// declares and what the audio holds.
func (c *Client) syncQuery(r SyncRequest) (url.Values, int64, error) {
	switch {
	case len(r.Audio) == 0:
		return nil, 0, errs.New(errs.Invalid, CodeNoAudio, "there is no audio to recognize")
	case len(r.Audio) > MaxSyncBytes:
		return nil, 0, syncUnfit("%d bytes, over %d", len(r.Audio), MaxSyncBytes)
	case r.DurationMs > MaxSyncDuration.Milliseconds():
		return nil, 0, syncUnfit("declared %d ms long, over %d", r.DurationMs, MaxSyncDuration.Milliseconds())
	}
	lang := DefaultLanguage
	if r.Language != "" {
		canonical, ok := languages[strings.ToLower(r.Language)]
		if !ok {
			return nil, 0, errs.New(errs.Invalid, CodeUnsupportedLanguage, "the recognizer does not support this language")
		}
		lang = canonical
	}
	if lang == AutoLanguage {
		return nil, 0, syncUnfit("language detection is not documented for the synchronous API")
	}
	model := c.cfg.Model
	if r.Model != "" {
		model = r.Model
	}
	q := url.Values{"lang": {lang}, "topic": {model}}
	var counted int64
	switch r.Format {
	case SyncOggOpus, "":
		q.Set("format", string(SyncOggOpus))
		ms, err := countOggOpus(r.Audio)
		if err != nil {
			return nil, 0, err
		}
		counted = ms
	case SyncLPCM:
		rate := r.SampleRateHertz
		if rate == 0 {
			rate = DefaultSyncSampleRate
		}
		if !syncSampleRates[rate] {
			return nil, 0, syncUnfit("LPCM at %d Hz; the API takes 8000, 16000 or 48000", rate)
		}
		if len(r.Audio)%2 != 0 {
			return nil, 0, syncUnfit("an odd number of bytes is not 16-bit LPCM")
		}
		q.Set("format", string(SyncLPCM))
		q.Set("sampleRateHertz", strconv.Itoa(rate))
		counted = lpcmMs(len(r.Audio), rate)
		if counted > MaxSyncDuration.Milliseconds() {
			return nil, 0, syncUnfit("%d ms of LPCM at %d Hz, over %d", counted, rate, MaxSyncDuration.Milliseconds())
		}
	default:
		return nil, 0, syncUnfit("format %q; the API takes oggopus or lpcm", quoted(string(r.Format)))
	}
	return q, max(r.DurationMs, counted), nil
}

// countOggOpus counts the audio of an Ogg Opus stream of one channel, at
// most MaxSyncDuration, by its packets (oggopus.Meter).
func countOggOpus(b []byte) (int64, error) {
	ch, err := oggopus.Channels(b)
	if err != nil {
		return 0, syncUnfit("not an Ogg Opus stream: %w", err)
	}
	if ch != SyncChannels {
		return 0, syncUnfit("%d channels; the API takes %d", ch, SyncChannels)
	}
	m := &oggopus.Meter{LimitMs: MaxSyncDuration.Milliseconds()}
	if _, err := m.Write(b); err != nil {
		return 0, syncUnfit("the Ogg Opus stream: %w", err)
	}
	if err := m.Close(); err != nil {
		return 0, syncUnfit("the Ogg Opus stream: %w", err)
	}
	return m.Ms(), nil
}

// lpcmMs is the length of n bytes of 16-bit mono LPCM at rate, in
// milliseconds rounded up.
func lpcmMs(n, rate int) int64 {
	samples := int64(n / 2)
	return (samples*1000 + int64(rate) - 1) / int64(rate)
}

// billedHeader reads YaCloud-Billing-Units: one value, a whole number of
// seconds that is a positive multiple of the 15-second unit and at most
// maxBilledHeader. Anything else (missing, repeated, a sign, a fraction,
// an older copy of the docs' "1", which would be units, not seconds) is
// not believed.
func billedHeader(values []string) (int64, bool) {
	if len(values) != 1 {
		return 0, false
	}
	v := strings.TrimSpace(values[0])
	if v == "" || len(v) > 4 || strings.Trim(v, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n%spend.SyncUnitSeconds != 0 || n > maxBilledHeader {
		return 0, false
	}
	return n, true
}

// syncRefusal classifies an answer other than 200 by its status
// (speechkit/concepts/response.md); the API's error code and message go
// into the cause only, cut short and with secrets removed.
func (c *Client) syncRefusal(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxSyncError))
	var a syncAnswer
	_ = json.Unmarshal(body, &a) // an answer that is not JSON is classified by its status alone
	// Secrets go before the cut, which could leave a part of one.
	cause := fmt.Errorf("synchronous recognition answered %d: %s %s",
		resp.StatusCode, quoted(c.scrub(a.ErrorCode)), cut(c.scrub(a.ErrorMessage), maxErrorQuoted))
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

// cut is s cut to at most n bytes at a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// NewHTTPClient is the HTTP client of synchronous requests, and of the other
// REST APIs that take the same credentials (Translate): TLS 1.2 at the
// least, the whole request bounded by timeout, and no redirect followed, so
// the credentials and the body go only where the configured URL says.
func NewHTTPClient(timeout time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = tlsConfig()
	return &http.Client{
		Transport: t,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// CheckSyncURL reports whether raw is a synchronous endpoint New takes:
// https with a host and no user information, or http with insecure. Its
// error never quotes raw, which may hold what it should not.
func CheckSyncURL(raw string, insecure bool) error {
	_, err := parseSyncURL(raw, insecure)
	return err
}

// parseSyncURL checks the synchronous endpoint: an https URL with a host
// and no user information (http only with insecure, for tests and the
// local fake, as plaintext gRPC is).
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
