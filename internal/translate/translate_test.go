package translate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
	"transcriber/internal/speechkit"
	"transcriber/internal/translate"
	"transcriber/internal/translate/translatetest"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// fakeTime is a fake clock and a Sleep that moves it, recording each sleep.
type fakeTime struct {
	clk    *clocktest.Fake
	mu     sync.Mutex
	sleeps []time.Duration
}

func newFakeTime() *fakeTime { return &fakeTime{clk: clocktest.NewFake(t0)} }

func (f *fakeTime) sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.sleeps = append(f.sleeps, d)
	f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	f.clk.Advance(d)
	return nil
}

func (f *fakeTime) slept() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

// harness is a fake API, a client of it on fake time, and the client's log.
type harness struct {
	srv    *translatetest.Server
	c      *translate.Client
	ft     *fakeTime
	log    *bytes.Buffer
	logMu  *sync.Mutex
	config translate.Config
}

func start(t *testing.T, edit ...func(*translate.Config)) *harness {
	t.Helper()
	srv := translatetest.Start(t)
	ft := newFakeTime()
	srv.SetClock(ft.clk)
	h := &harness{srv: srv, ft: ft, log: &bytes.Buffer{}, logMu: &sync.Mutex{}}
	cfg := srv.Config()
	cfg.Clock, cfg.Sleep = ft.clk, ft.sleep
	cfg.Log = slog.New(slog.NewTextHandler(lockedWriter{h.log, h.logMu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for _, e := range edit {
		e(&cfg)
	}
	c, err := translate.New(cfg)
	require.NoError(t, err)
	h.c, h.config = c, cfg
	return h
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (h *harness) logText() string {
	h.logMu.Lock()
	defer h.logMu.Unlock()
	return h.log.String()
}

// words makes a text of n characters from distinct sentences, so each text
// of a test is told apart by its content.
func words(tag string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s sentence %d is here. ", tag, i)
	}
	return strings.TrimSpace(b.String()[:n])
}

func translated(texts []string, target string) []string {
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = translatetest.Translation(t, target)
	}
	return out
}

func requireErr(t *testing.T, err error, kind errs.Kind, code string) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, kind, errs.KindOf(err), "kind of %v", err)
	require.Equal(t, code, errs.CodeOf(err), "code of %v", err)
}

// requireAbsent checks every text err shows: its message for people, its
// full text for logs, and each error's in its chain.
func requireAbsent(t *testing.T, err error, secret string) {
	t.Helper()
	require.NotContains(t, errs.MessageOf(err), secret)
	for e := err; e != nil; e = errors.Unwrap(e) {
		require.NotContains(t, e.Error(), secret)
	}
}

func TestTranslateKeepsTheOrderAcrossRequests(t *testing.T) {
	h := start(t)
	var texts []string
	for i := 0; i < 30; i++ {
		texts = append(texts, words(fmt.Sprintf("t%02d", i), 900+i*7))
	}

	res, err := h.c.Translate(context.Background(), texts, "de", "en")

	require.NoError(t, err)
	require.Equal(t, translated(texts, "de"), res.Texts)
	calls := h.srv.Calls()
	require.GreaterOrEqual(t, len(calls), 3, "30 texts of about 1,000 characters need three requests at least")
	var sent []string
	var billed int64
	for i, c := range calls {
		require.Equal(t, http.StatusOK, c.Status)
		require.LessOrEqual(t, c.Chars, translate.MaxRequestChars)
		if i < len(calls)-1 {
			require.Greater(t, c.Chars, translate.MaxRequestChars-1200, "a request is filled before the next begins")
		}
		sent = append(sent, c.Texts...)
		billed += translate.Chars(c.Texts)
	}
	require.Equal(t, texts, sent, "every text whole, in order, once")
	require.Equal(t, billed, res.BilledChars)
	require.Equal(t, translate.Estimate(texts), res.BilledChars)
	require.Zero(t, res.UnsureChars)
}

func TestALongTextIsCutAtSentencesAndJoinedBack(t *testing.T) {
	h := start(t)
	long := words("long", 25_000)
	texts := []string{"before", long, "after"}

	res, err := h.c.Translate(context.Background(), texts, "en", "")

	require.NoError(t, err)
	require.Len(t, res.Texts, 3)
	require.Equal(t, translatetest.Translation("before", "en"), res.Texts[0])
	require.Equal(t, translatetest.Translation("after", "en"), res.Texts[2])
	require.Equal(t, long, strings.ReplaceAll(res.Texts[1], "[en] ", ""), "the pieces joined back with their spaces")
	require.Equal(t, 3, strings.Count(res.Texts[1], "[en] "), "25,000 characters in three pieces")
	for _, c := range h.srv.Calls() {
		require.LessOrEqual(t, c.Chars, translate.MaxRequestChars)
		for _, text := range c.Texts {
			if strings.HasPrefix(text, "long") && len(text) < len(long) {
				require.True(t, strings.HasSuffix(text, "."), "a piece ends a sentence: %q", text[len(text)-20:])
			}
		}
	}
}

func TestATextWithoutSpacesIsCutWithinTheLimit(t *testing.T) {
	for name, text := range map[string]string{
		"cyrillic":        strings.Repeat("я", 25_000),
		"emoji":           strings.Repeat("😀", 6_000),             // 6,000 code points, 12,000 UTF-16 units
		"combining marks": "x" + strings.Repeat("e\u0301", 6_000), // a cut at 10,000 would fall before a mark
	} {
		t.Run(name, func(t *testing.T) {
			h := start(t)

			res, err := h.c.Translate(context.Background(), []string{text}, "en", "ru")

			require.NoError(t, err)
			require.Equal(t, text, strings.ReplaceAll(res.Texts[0], "[en] ", ""))
			for _, c := range h.srv.Calls() {
				units := 0
				for _, s := range c.Texts {
					require.True(t, utf8.ValidString(s), "never inside a character")
					require.False(t, strings.HasPrefix(s, "\u0301"), "never before a combining mark")
					for _, r := range s {
						units += utf16.RuneLen(r)
					}
				}
				require.LessOrEqual(t, units, translate.MaxRequestChars, "under the limit in UTF-16 units too")
			}
		})
	}
}

func TestBlankTextsAreNotSent(t *testing.T) {
	h := start(t)

	res, err := h.c.Translate(context.Background(), []string{"", "  \n", "hi", ""}, "de", "")

	require.NoError(t, err)
	require.Equal(t, []string{"", "  \n", "[de] hi", ""}, res.Texts)
	calls := h.srv.Calls()
	require.Len(t, calls, 1)
	require.Equal(t, []string{"hi"}, calls[0].Texts)
	require.Equal(t, int64(2), res.BilledChars)

	res, err = h.c.Translate(context.Background(), []string{" ", ""}, "de", "")
	require.NoError(t, err)
	require.Equal(t, []string{" ", ""}, res.Texts)
	require.Zero(t, res.BilledChars)
	require.Len(t, h.srv.Calls(), 1, "nothing to send, nothing sent")
}

func TestTheRequest(t *testing.T) {
	h := start(t)

	_, err := h.c.Translate(context.Background(), []string{"привет"}, " DE ", "")

	require.NoError(t, err)
	c := h.srv.Calls()[0]
	require.Equal(t, "Api-Key "+translatetest.TestKey, c.Authorization)
	require.Equal(t, "de", c.Target, "trimmed, lower case")
	require.Empty(t, c.Source, "no source: the API detects it")
	require.Equal(t, "PLAIN_TEXT", c.Format)
	require.Empty(t, c.FolderID, "no folder with an API key")
	require.NotEmpty(t, c.RequestID)
	require.Equal(t, "application/json", c.Header.Get("Content-Type"))
	require.Empty(t, c.Header.Get("x-data-logging-enabled"), "the API keeps no data unless asked")
}

func TestIAMTokenSharedWithSpeechKit(t *testing.T) {
	meta := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Metadata-Flavor") != "Google" {
			http.Error(w, "no flavor", http.StatusForbidden)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "t1.iam-token-1", "expires_in": 43200, "token_type": "Bearer"})
	}))
	t.Cleanup(meta.Close)
	auth, err := speechkit.NewAuthorizer("", "b1gfolder", meta.URL, clocktest.NewFake(t0))
	require.NoError(t, err)
	h := start(t, func(c *translate.Config) { c.Credentials = auth })
	h.srv.AcceptToken("t1.iam-token-1")
	h.srv.Script(func(c translatetest.Call) translatetest.Plan {
		if c.Texts[0] == "refuse" {
			return translatetest.Plan{Status: http.StatusForbidden, Message: "token t1.iam-token-1 may not translate"}
		}
		return translatetest.Plan{}
	})

	res, err := h.c.Translate(context.Background(), []string{"hello"}, "ru", "")
	require.NoError(t, err)
	require.Equal(t, []string{"[ru] hello"}, res.Texts)
	c := h.srv.Calls()[0]
	require.Equal(t, "Bearer t1.iam-token-1", c.Authorization)
	require.Equal(t, "b1gfolder", c.FolderID, "the folder goes with an IAM token")

	_, err = h.c.Translate(context.Background(), []string{"refuse"}, "ru", "")
	requireErr(t, err, errs.Unavailable, translate.CodeAccessDenied)
	requireAbsent(t, err, "t1.iam-token-1")
	require.Contains(t, err.Error(), "[redacted]")
}

func TestRetries(t *testing.T) {
	t.Run("429 is retried after its Retry-After", func(t *testing.T) {
		h := start(t)
		n := 0
		h.srv.Script(func(translatetest.Call) translatetest.Plan {
			n++
			if n <= 2 {
				return translatetest.Plan{Status: http.StatusTooManyRequests, RetryAfter: "3"}
			}
			return translatetest.Plan{}
		})

		res, err := h.c.Translate(context.Background(), []string{"hello"}, "de", "")

		require.NoError(t, err)
		require.Equal(t, []string{"[de] hello"}, res.Texts)
		require.Equal(t, []time.Duration{3 * time.Second, 3 * time.Second}, h.ft.slept())
		require.Len(t, h.srv.Calls(), 3)
		require.Equal(t, int64(5), res.BilledChars, "refused attempts are not billed")
		require.Contains(t, h.logText(), "translate retry")
	})

	t.Run("a Retry-After date is read against the clock", func(t *testing.T) {
		h := start(t)
		n := 0
		h.srv.Script(func(translatetest.Call) translatetest.Plan {
			n++
			if n == 1 {
				return translatetest.Plan{Status: http.StatusServiceUnavailable,
					RetryAfter: h.ft.clk.Now().Add(7 * time.Second).Format(http.TimeFormat)}
			}
			return translatetest.Plan{}
		})

		_, err := h.c.Translate(context.Background(), []string{"hello"}, "de", "")

		require.NoError(t, err)
		require.Equal(t, []time.Duration{7 * time.Second}, h.ft.slept())
	})

	t.Run("5xx is retried with a doubling backoff, a bounded number of times", func(t *testing.T) {
		h := start(t)
		h.srv.Script(func(translatetest.Call) translatetest.Plan {
			return translatetest.Plan{Status: http.StatusInternalServerError}
		})

		res, err := h.c.Translate(context.Background(), []string{"hello"}, "de", "")

		requireErr(t, err, errs.Unavailable, translate.CodeUnavailable)
		require.Len(t, h.srv.Calls(), translate.DefaultMaxAttempts)
		require.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, h.ft.slept())
		require.Zero(t, res.BilledChars)
		require.Empty(t, res.Texts)
	})

	t.Run("429 after the retries is the quota", func(t *testing.T) {
		h := start(t)
		h.srv.Script(func(translatetest.Call) translatetest.Plan {
			return translatetest.Plan{Status: http.StatusTooManyRequests}
		})

		_, err := h.c.Translate(context.Background(), []string{"hello"}, "de", "")

		requireErr(t, err, errs.Unavailable, translate.CodeQuota)
		require.Len(t, h.srv.Calls(), translate.DefaultMaxAttempts)
	})

	t.Run("a Retry-After longer than the client waits ends the call at once", func(t *testing.T) {
		h := start(t)
		h.srv.Script(func(translatetest.Call) translatetest.Plan {
			return translatetest.Plan{Status: http.StatusTooManyRequests, RetryAfter: "120"}
		})

		_, err := h.c.Translate(context.Background(), []string{"hello"}, "de", "")

		requireErr(t, err, errs.Unavailable, translate.CodeQuota)
		require.Len(t, h.srv.Calls(), 1)
		require.Empty(t, h.ft.slept())
		require.Contains(t, err.Error(), "retry after 2m0s", "the wait asked for")
	})

	t.Run("400 is not retried", func(t *testing.T) {
		h := start(t)
		h.srv.Script(func(translatetest.Call) translatetest.Plan {
			return translatetest.Plan{Status: http.StatusBadRequest, Message: "something is wrong"}
		})

		_, err := h.c.Translate(context.Background(), []string{"hello"}, "de", "")

		requireErr(t, err, errs.Invalid, translate.CodeInvalid)
		require.Len(t, h.srv.Calls(), 1)
		require.Empty(t, h.ft.slept())
	})

	t.Run("a connection that could not be made is retried", func(t *testing.T) {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := lis.Addr().String()
		require.NoError(t, lis.Close())
		h := start(t, func(c *translate.Config) { c.URL = "http://" + addr + translatetest.Path })

		res, err := h.c.Translate(context.Background(), []string{"hello"}, "de", "")

		requireErr(t, err, errs.Unavailable, translate.CodeUnavailable)
		require.Len(t, h.ft.slept(), translate.DefaultMaxAttempts-1)
		require.Zero(t, res.UnsureChars, "never sent")
	})

	t.Run("a request sent and never answered is not sent again", func(t *testing.T) {
		h := start(t)
		h.srv.Script(func(translatetest.Call) translatetest.Plan { return translatetest.Plan{Drop: true} })

		res, err := h.c.Translate(context.Background(), []string{"hello"}, "de", "")

		requireErr(t, err, errs.Unavailable, translate.CodeUnavailable)
		require.Len(t, h.srv.Calls(), 1, "it may have been translated and billed")
		require.Equal(t, int64(5), res.UnsureChars)
		require.Zero(t, res.BilledChars)
	})

	t.Run("a cancelled wait ends the call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		h := start(t, func(c *translate.Config) {
			c.Sleep = func(ctx context.Context, _ time.Duration) error {
				cancel()
				return ctx.Err()
			}
		})
		h.srv.Script(func(translatetest.Call) translatetest.Plan {
			return translatetest.Plan{Status: http.StatusServiceUnavailable}
		})

		_, err := h.c.Translate(ctx, []string{"hello"}, "de", "")

		requireErr(t, err, errs.Unavailable, translate.CodeUnavailable)
		require.Len(t, h.srv.Calls(), 1)
	})
}

func TestLanguages(t *testing.T) {
	t.Run("a code the API does not know is permanent", func(t *testing.T) {
		h := start(t)
		_, err := h.c.Translate(context.Background(), []string{"hello"}, "xx", "")
		requireErr(t, err, errs.Permanent, translate.CodeUnsupportedLanguage)
		_, err = h.c.Translate(context.Background(), []string{"hello"}, "en", "qq")
		requireErr(t, err, errs.Permanent, translate.CodeUnsupportedLanguage)
		require.Len(t, h.srv.Calls(), 2, "asked once each, never retried")
	})

	t.Run("what is not a language code is not sent", func(t *testing.T) {
		h := start(t)
		for _, bad := range [][2]string{{"", ""}, {"en-US", ""}, {"e", ""}, {"en", "ру"}, {"toolonglanguage", ""}} {
			res, err := h.c.Translate(context.Background(), []string{"hello"}, bad[0], bad[1])
			requireErr(t, err, errs.Invalid, translate.CodeInvalid)
			require.Zero(t, res.BilledChars)
		}
		require.Empty(t, h.srv.Calls())
	})

	t.Run("the documented list", func(t *testing.T) {
		require.True(t, translate.Supported("EN"))
		require.True(t, translate.Supported("kazlat"))
		require.False(t, translate.Supported("xx"))
		require.True(t, translate.Supported("ru"))
	})
}

func TestSecretsAndTextsNeverInErrorsOrLogs(t *testing.T) {
	t.Run("a wrong key echoed by the API", func(t *testing.T) {
		h := start(t, func(c *translate.Config) { c.Credentials = translatetest.KeyCredentials("AQVNwrong-key-value") })

		_, err := h.c.Translate(context.Background(), []string{"hello"}, "de", "")

		requireErr(t, err, errs.Unavailable, translate.CodeAccessDenied)
		require.Contains(t, h.srv.Calls()[0].Authorization, "AQVNwrong-key-value", "it was sent")
		requireAbsent(t, err, "AQVNwrong-key-value")
		require.Len(t, h.srv.Calls(), 1, "401 is not retried")
	})

	t.Run("texts echoed by the API", func(t *testing.T) {
		h := start(t)
		secret := "my bank PIN is 4921 and my password is hunter2"
		long := words("private", 3000)
		h.srv.Script(func(c translatetest.Call) translatetest.Plan {
			if c.Texts[0] == secret {
				return translatetest.Plan{Status: http.StatusBadRequest, Message: "cannot translate: " + secret}
			}
			// A message quoting the start of a text only.
			return translatetest.Plan{Status: http.StatusServiceUnavailable, Message: "failed on " + c.Texts[0][:60]}
		})

		_, err := h.c.Translate(context.Background(), []string{secret}, "de", "")
		requireErr(t, err, errs.Invalid, translate.CodeInvalid)
		requireAbsent(t, err, "hunter2")

		_, err = h.c.Translate(context.Background(), []string{long}, "de", "")
		requireErr(t, err, errs.Unavailable, translate.CodeUnavailable)
		requireAbsent(t, err, long[:30])
		log := h.logText()
		require.NotContains(t, log, long[:30])
		require.NotContains(t, log, "hunter2")
		require.NotContains(t, log, translatetest.TestKey)
		require.Contains(t, log, "translate retry", "the retries were logged")
	})

	t.Run("an over-long request refused with its texts", func(t *testing.T) {
		// The client never sends one; a script makes the fake's answer.
		h := start(t)
		h.srv.Script(func(c translatetest.Call) translatetest.Plan {
			return translatetest.Plan{Status: http.StatusBadRequest,
				Message: "total texts length must be not greater than 10000, got: " + strings.Join(c.Texts, "")}
		})
		_, err := h.c.Translate(context.Background(), []string{"a private note", "another one"}, "de", "")
		requireErr(t, err, errs.Invalid, translate.CodeInvalid)
		requireAbsent(t, err, "private note")
		requireAbsent(t, err, "another one")
	})
}

func TestAnswersThatAreNotTheAPIs(t *testing.T) {
	for name, plan := range map[string]translatetest.Plan{
		"fewer translations than texts": {Translations: []string{"only one"}},
		"not JSON":                      {Body: []byte("<html>gateway</html>")},
		"an unknown status":             {Status: http.StatusTeapot},
	} {
		t.Run(name, func(t *testing.T) {
			h := start(t)
			h.srv.Script(func(translatetest.Call) translatetest.Plan { return plan })

			_, err := h.c.Translate(context.Background(), []string{"one", "two"}, "de", "")

			requireErr(t, err, errs.Internal, "translate_error")
			require.Len(t, h.srv.Calls(), 1)
		})
	}
}

func TestAnErrorKeepsWhatWasTranslated(t *testing.T) {
	h := start(t)
	var texts []string
	for i := 0; i < 12; i++ {
		texts = append(texts, words(fmt.Sprintf("t%02d", i), 2_000))
	}
	n := 0
	h.srv.Script(func(translatetest.Call) translatetest.Plan {
		n++
		if n == 2 {
			return translatetest.Plan{Status: http.StatusBadRequest}
		}
		return translatetest.Plan{}
	})

	res, err := h.c.Translate(context.Background(), texts, "de", "en")

	requireErr(t, err, errs.Invalid, translate.CodeInvalid)
	first := h.srv.Calls()[0]
	require.Equal(t, translated(first.Texts, "de"), res.Texts, "the first request's texts, in order")
	require.Equal(t, texts[:len(first.Texts)], first.Texts)
	require.Equal(t, translate.Chars(first.Texts), res.BilledChars, "what was billed, so it is not paid again")
}

func TestPacing(t *testing.T) {
	// The fake answers 429 past 20 requests in a second of the same fake
	// clock the client's pacer sleeps on.
	run := func(t *testing.T, q translate.Quota) (*harness, int) {
		t.Helper()
		h := start(t, func(c *translate.Config) {
			c.MaxAttempts = 1
			c.Quota = q
		})
		h.srv.Limit(20, "1")
		refused := 0
		for i := 0; i < 50; i++ {
			_, err := h.c.Translate(context.Background(), []string{fmt.Sprintf("text %d", i)}, "de", "")
			if errs.CodeOf(err) == translate.CodeQuota {
				refused++
			} else {
				require.NoError(t, err)
			}
		}
		return h, refused
	}

	t.Run("the default pacer keeps 20 requests a second", func(t *testing.T) {
		h, refused := run(t, translate.Quota{})
		require.Zero(t, refused)
		calls := h.srv.Calls()
		require.Len(t, calls, 50)
		for i := 20; i < len(calls); i++ {
			require.GreaterOrEqual(t, calls[i].At.Sub(calls[i-20].At), time.Second, "request %d", i)
		}
	})

	t.Run("without pacing the API refuses", func(t *testing.T) {
		_, refused := run(t, translate.Quota{RequestsPerSecond: 1000}) // as good as none
		require.Equal(t, 30, refused, "the test sees what the pacer prevents")
	})

	t.Run("characters an hour", func(t *testing.T) {
		h := start(t, func(c *translate.Config) {
			c.Quota = translate.Quota{CharsPerHour: 25_000, MaxWait: 2 * time.Hour}
		})
		text := words("hour", 10_000)
		for i := 0; i < 3; i++ {
			_, err := h.c.Translate(context.Background(), []string{text}, "de", "")
			require.NoError(t, err)
		}
		calls := h.srv.Calls()
		require.Len(t, calls, 3)
		require.Equal(t, t0, calls[1].At)
		require.Equal(t, t0.Add(time.Hour), calls[2].At, "the third waits for the first to leave the hour")
	})

	t.Run("a wait past MaxWait is refused, nothing sent", func(t *testing.T) {
		h := start(t, func(c *translate.Config) {
			c.Quota = translate.Quota{CharsPerHour: 15_000, MaxWait: 30 * time.Second}
		})
		text := words("hour", 10_000)
		_, err := h.c.Translate(context.Background(), []string{text}, "de", "")
		require.NoError(t, err)

		_, err = h.c.Translate(context.Background(), []string{text}, "de", "")

		requireErr(t, err, errs.Unavailable, translate.CodeQuota)
		require.Len(t, h.srv.Calls(), 1)
		require.Empty(t, h.ft.slept())
	})
}

func TestChars(t *testing.T) {
	require.Equal(t, int64(1), translate.Chars(nil), "an empty request costs one character")
	require.Equal(t, int64(1), translate.Chars([]string{""}))
	require.Equal(t, int64(6), translate.Chars([]string{"привет"}), "characters, not bytes")
	require.Equal(t, int64(1), translate.Chars([]string{"😀"}))
	require.Equal(t, int64(11), translate.Chars([]string{"hello", " world"}), "spaces count")
}

func TestURL(t *testing.T) {
	require.NoError(t, translate.CheckURL(translate.DefaultURL, false))
	require.NoError(t, translate.CheckURL("http://127.0.0.1:9/translate/v2/translate", true))
	for _, bad := range []string{"http://translate.example/v2", "https://user:pass@translate.example/", "ftp://x/", "not a url", ""} {
		err := translate.CheckURL(bad, false)
		require.Error(t, err, bad)
		if bad != "" {
			require.NotContains(t, err.Error(), bad)
		}
	}
	key := translatetest.KeyCredentials("k")
	_, err := translate.New(translate.Config{URL: "http://translate.example/", Credentials: key})
	require.Error(t, err)
	_, err = translate.New(translate.Config{})
	require.ErrorContains(t, err, "no credentials")
	c, err := translate.New(translate.Config{Credentials: key})
	require.NoError(t, err, "the default URL")
	require.NotNil(t, c)
}

// A redirect is not followed: the key and the texts go only to the
// configured URL.
func TestFollowsNoRedirect(t *testing.T) {
	var elsewhere int
	var mu sync.Mutex
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		mu.Lock()
		elsewhere++
		mu.Unlock()
	}))
	t.Cleanup(other.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+translatetest.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	h := start(t, func(c *translate.Config) { c.URL = redirect.URL + translatetest.Path })

	_, err := h.c.Translate(context.Background(), []string{"hello"}, "de", "")

	requireErr(t, err, errs.Internal, "translate_error")
	mu.Lock()
	defer mu.Unlock()
	require.Zero(t, elsewhere)
}
