package translatetest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/translate/translatetest"
)

// post sends body to the fake with auth and returns the status, the
// answer's JSON and its Retry-After.
func post(t *testing.T, s *translatetest.Server, auth string, body any) (int, map[string]any, string) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, s.URL(), bytes.NewReader(b))
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out, resp.Header.Get("Retry-After")
}

const key = "Api-Key " + translatetest.TestKey

func req(target string, texts ...string) map[string]any {
	return map[string]any{"targetLanguageCode": target, "texts": texts, "format": "PLAIN_TEXT"}
}

func TestFakeTranslates(t *testing.T) {
	s := translatetest.Start(t)

	status, out, _ := post(t, s, key, req("en", "привет", "hello"))

	require.Equal(t, http.StatusOK, status)
	require.Equal(t, map[string]any{"translations": []any{
		map[string]any{"text": "[en] привет", "detectedLanguageCode": "ru"},
		map[string]any{"text": "[en] hello", "detectedLanguageCode": "en"},
	}}, out)
	calls := s.Calls()
	require.Len(t, calls, 1)
	require.Equal(t, []string{"привет", "hello"}, calls[0].Texts)
	require.Equal(t, "en", calls[0].Target)
	require.Equal(t, 11, calls[0].Chars)
	require.Equal(t, key, calls[0].Authorization)
}

func TestFakeRefusesAsTheAPIDoes(t *testing.T) {
	s := translatetest.Start(t)
	s.AcceptToken("t1.good")
	for name, tc := range map[string]struct {
		auth   string
		body   any
		status int
		code   float64
		msg    string
	}{
		"no credentials":        {"", req("en", "x"), 401, 16, "unknown credentials"},
		"a wrong key":           {"Api-Key nope", req("en", "x"), 401, 16, "unknown credentials"},
		"an unknown token":      {"Bearer t1.bad", req("en", "x"), 401, 16, "unknown credentials"},
		"no target":             {key, req("", "x"), 400, 3, "target_language_code must be set"},
		"an unknown target":     {key, req("xx", "x"), 400, 3, "unsupported target_language_code: xx"},
		"an unknown source":     {"Bearer t1.good", map[string]any{"targetLanguageCode": "en", "sourceLanguageCode": "qq", "texts": []string{"x"}}, 400, 3, "unsupported source_language_code: qq"},
		"no texts":              {key, req("en"), 400, 3, "texts are empty"},
		"over 10,000 in all":    {key, req("en", strings.Repeat("я", 6000), strings.Repeat("a", 4001)), 400, 3, "total texts length must be not greater than 10000"},
		"not JSON":              {key, "just a string", 400, 3, "not JSON"},
		"an unsupported format": {key, map[string]any{"targetLanguageCode": "en", "texts": []string{"x"}, "format": "PDF"}, 400, 3, "unsupported format"},
	} {
		t.Run(name, func(t *testing.T) {
			status, out, _ := post(t, s, tc.auth, tc.body)
			require.Equal(t, tc.status, status)
			require.Equal(t, tc.code, out["code"])
			require.Contains(t, out["message"], tc.msg)
		})
	}

	status, _, _ := post(t, s, key, req("en", strings.Repeat("я", 6000), strings.Repeat("a", 4000)))
	require.Equal(t, http.StatusOK, status, "10,000 characters exactly, counted as characters, not bytes")
}

func TestFakeRate(t *testing.T) {
	s := translatetest.Start(t)
	clk := clocktest.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	s.SetClock(clk)
	s.Limit(2, "1")

	for i := 0; i < 2; i++ {
		status, _, _ := post(t, s, key, req("en", "x"))
		require.Equal(t, http.StatusOK, status)
	}
	status, out, retryAfter := post(t, s, key, req("en", "x"))
	require.Equal(t, http.StatusTooManyRequests, status)
	require.Equal(t, float64(8), out["code"])
	require.Equal(t, "1", retryAfter)

	clk.Advance(time.Second)
	status, _, _ = post(t, s, key, req("en", "x"))
	require.Equal(t, http.StatusOK, status, "a second later there is room")
}

func TestFakeScript(t *testing.T) {
	s := translatetest.Start(t)
	s.Script(func(c translatetest.Call) translatetest.Plan {
		if c.Texts[0] == "fail" {
			return translatetest.Plan{Status: http.StatusServiceUnavailable, RetryAfter: "2"}
		}
		return translatetest.Plan{}
	})

	status, out, retryAfter := post(t, s, key, req("en", "fail"))
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Equal(t, float64(14), out["code"])
	require.Equal(t, "2", retryAfter)

	status, _, _ = post(t, s, key, req("en", "fine"))
	require.Equal(t, http.StatusOK, status)
	calls := s.Calls()
	require.Equal(t, []int{503, 200}, []int{calls[0].Status, calls[1].Status})
}
