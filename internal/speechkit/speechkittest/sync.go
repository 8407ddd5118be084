package speechkittest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"transcriber/internal/clock"
	"transcriber/internal/media/oggopus"
)

// The fake's synchronous recognition: SpeechKit's REST API v1
// (POST /speech/v1/stt:recognize), served by SyncHandler, and by Start on
// an httptest server at SyncURL. Like SpeechKit it refuses, with 400, a
// request outside the documented limits before any script sees it: a body
// over 1 MB, a format other than oggopus or lpcm, an LPCM sample rate other
// than 8000, 16000 or 48000, more than one channel, or more than 30 s of
// audio, counted from the audio itself (an Ogg Opus stream's packets with
// oggopus.Meter, LPCM's bytes at its rate). Without credentials it answers
// 401. Then the script decides (SyncScript, SyncPlan).

// SyncPath is the path of synchronous recognition.
const SyncPath = "/speech/v1/stt:recognize"

// DefaultSyncText is what the fake recognizes when no script says
// otherwise.
const DefaultSyncText = "привет мир"

// The fake's limits, as documented (speechkit/stt/request.md).
const (
	syncMaxBytes = 1_000_000
	syncMaxMs    = 30_000
)

// SyncPlan is what the fake answers to one synchronous request that passed
// its checks.
type SyncPlan struct {
	// Status is the answer's status; 0 is 200. Any other answers
	// {"error_code", "error_message"} (ErrorCode, ErrorMessage, or words of
	// the fake's own) unless Body is set.
	Status int
	// Text is the recognized text of a 200; with Status 0 and no Text,
	// DefaultSyncText. NoSpeech answers an empty text.
	Text     string
	NoSpeech bool
	// BillingUnits is the YaCloud-Billing-Units header of a 200: empty is
	// SpeechKit's rule for the audio counted (15-second units, rounded
	// up), NoBillingHeader leaves the header out, anything else is sent
	// as it is.
	BillingUnits    string
	NoBillingHeader bool
	// ErrorCode and ErrorMessage are the error answer's fields.
	ErrorCode, ErrorMessage string
	// Body, when set, is the whole answer body instead of the JSON the
	// fake makes (an answer that is not the API's).
	Body []byte
	// Delay holds the answer this long, or until the request is given up;
	// Hold, when set, until it is closed or the request is given up. For
	// slow answers and time-outs.
	Delay time.Duration
	Hold  <-chan struct{}
}

// SyncCall is one synchronous request as the fake saw it.
type SyncCall struct {
	Query         url.Values
	Authorization string
	RequestID     string // x-client-request-id
	ContentType   string
	Audio         []byte // the body as received (at most 1 MB and a byte are kept)
	// DurationMs and Channels are what the fake counted in the audio; 0
	// when it could not.
	DurationMs int64
	Channels   int
	// Status is what the fake answered; 0 while the answer is held.
	Status int
}

type syncFake struct {
	mu     sync.Mutex
	script func(SyncCall) SyncPlan
	calls  []SyncCall
	url    string
}

// SyncScript sets what each later synchronous request that passes the
// fake's checks is answered; fn sees the request. Without a script every
// such request is answered 200 with DefaultSyncText and the billing header
// of SpeechKit's rule.
func (s *Server) SyncScript(fn func(SyncCall) SyncPlan) {
	s.sync.mu.Lock()
	defer s.sync.mu.Unlock()
	s.sync.script = fn
}

// SyncCalls are the synchronous requests so far, in order, refused ones
// included.
func (s *Server) SyncCalls() []SyncCall {
	s.sync.mu.Lock()
	defer s.sync.mu.Unlock()
	return append([]SyncCall(nil), s.sync.calls...)
}

// SyncCallCount is the number of synchronous requests so far.
func (s *Server) SyncCallCount() int {
	s.sync.mu.Lock()
	defer s.sync.mu.Unlock()
	return len(s.sync.calls)
}

// SyncURL is the synchronous endpoint's URL once Start has run ("" for a
// fake made with New, whose SyncHandler the caller serves).
func (s *Server) SyncURL() string {
	s.sync.mu.Lock()
	defer s.sync.mu.Unlock()
	return s.sync.url
}

// SyncHandler serves synchronous recognition at SyncPath.
func (s *Server) SyncHandler() http.Handler { return http.HandlerFunc(s.serveSync) }

func (s *Server) serveSync(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != SyncPath {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		syncError(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "POST only")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, syncMaxBytes+1))
	if err != nil {
		syncError(w, http.StatusBadRequest, "BAD_REQUEST", "the body could not be read")
		return
	}
	c := SyncCall{Query: r.URL.Query(), Authorization: r.Header.Get("Authorization"),
		RequestID: r.Header.Get("x-client-request-id"), ContentType: r.Header.Get("Content-Type"), Audio: body}
	i := s.addSyncCall(c)
	status := s.answerSync(w, r, &c)
	s.setSyncStatus(i, c, status)
}

func (s *Server) addSyncCall(c SyncCall) int {
	s.sync.mu.Lock()
	defer s.sync.mu.Unlock()
	s.sync.calls = append(s.sync.calls, c)
	return len(s.sync.calls) - 1
}

func (s *Server) setSyncStatus(i int, c SyncCall, status int) {
	s.sync.mu.Lock()
	defer s.sync.mu.Unlock()
	c.Status = status
	s.sync.calls[i] = c
}

// answerSync checks the request as SpeechKit documents, then answers as
// the script says; it returns the status answered.
func (s *Server) answerSync(w http.ResponseWriter, r *http.Request, c *SyncCall) int {
	if c.Authorization == "" {
		return syncError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "no Authorization header")
	}
	if len(c.Audio) > syncMaxBytes {
		return syncError(w, http.StatusBadRequest, "BAD_REQUEST", "the audio is over 1 MB")
	}
	if len(c.Audio) == 0 {
		return syncError(w, http.StatusBadRequest, "BAD_REQUEST", "no audio")
	}
	switch format := c.Query.Get("format"); format {
	case "", "oggopus":
		ch, err := oggopus.Channels(c.Audio)
		if err != nil {
			return syncError(w, http.StatusBadRequest, "BAD_REQUEST", "the audio is not OggOpus")
		}
		c.Channels = ch
		m := &oggopus.Meter{}
		if _, err := m.Write(c.Audio); err != nil || m.Close() != nil {
			return syncError(w, http.StatusBadRequest, "BAD_REQUEST", "the audio is not OggOpus")
		}
		c.DurationMs = m.Ms()
	case "lpcm":
		rate := 48000
		if v := c.Query.Get("sampleRateHertz"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n != 8000 && n != 16000 && n != 48000 {
				return syncError(w, http.StatusBadRequest, "BAD_REQUEST", "sampleRateHertz must be 8000, 16000 or 48000")
			}
			rate = n
		}
		c.Channels = 1 // LPCM says nothing of its channels: it is taken as one
		c.DurationMs = (int64(len(c.Audio)/2)*1000 + int64(rate) - 1) / int64(rate)
	default:
		return syncError(w, http.StatusBadRequest, "BAD_REQUEST", "format must be oggopus or lpcm")
	}
	if c.Channels != 1 {
		return syncError(w, http.StatusBadRequest, "BAD_REQUEST", "the audio has more than one channel")
	}
	if c.DurationMs > syncMaxMs {
		return syncError(w, http.StatusBadRequest, "BAD_REQUEST", "the audio is longer than 30 seconds")
	}

	s.sync.mu.Lock()
	script := s.sync.script
	s.sync.mu.Unlock()
	var p SyncPlan
	if script != nil {
		p = script(*c) // outside the lock: the script may call the Server
	}
	if err := hold(r.Context(), p); err != nil {
		return 0 // the client gave up: nobody reads an answer
	}
	status := p.Status
	if status == 0 {
		status = http.StatusOK
	}
	if p.Body != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(p.Body)
		return status
	}
	if status != http.StatusOK {
		code, msg := p.ErrorCode, p.ErrorMessage
		if code == "" {
			code = http.StatusText(status)
		}
		if msg == "" {
			msg = "the fake was told to answer " + strconv.Itoa(status)
		}
		return syncError(w, status, code, msg)
	}
	text := p.Text
	if text == "" && !p.NoSpeech {
		text = DefaultSyncText
	}
	switch {
	case p.NoBillingHeader:
	case p.BillingUnits != "":
		w.Header().Set("YaCloud-Billing-Units", p.BillingUnits)
	default:
		units := max((c.DurationMs+14_999)/15_000, 1)
		w.Header().Set("YaCloud-Billing-Units", strconv.FormatInt(units*15, 10))
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"result": text})
	return status
}

// hold waits as p says, or until ctx ends (the client gave up).
func hold(ctx context.Context, p SyncPlan) error {
	if p.Hold != nil {
		select {
		case <-p.Hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if p.Delay > 0 {
		if err := clock.Sleep(ctx, p.Delay); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// syncError writes the API's error answer and returns its status.
func syncError(w http.ResponseWriter, status int, code, msg string) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error_code": code, "error_message": msg})
	return status
}
