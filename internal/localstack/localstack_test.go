package localstack

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/trigger"
)

// stack is a running Run in this process.
type stack struct {
	api, objects, token, callbackSecret, data string
	announcedData                             string // the start's data: line
}

// startStack runs the stack on free ports with a fresh data directory
// until the test ends.
func startStack(t *testing.T, origins ...string) stack {
	t.Helper()
	return startStackWith(t, func(c *Config) { c.CORSOrigins = origins })
}

// startStackWith runs the stack as startStack does, with its configuration
// changed by change first.
func startStackWith(t *testing.T, change func(*Config)) stack {
	t.Helper()
	data := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	cfg := Config{
		HTTPAddr: "127.0.0.1:0", S3Addr: "127.0.0.1:0", DataDir: data,
		PollInterval: time.Hour, Shutdown: time.Second, Log: logs.Logger(t),
	}
	change(&cfg)
	go func() {
		done <- Run(ctx, cfg, w)
		_ = w.Close()
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	st := stack{data: cfg.DataDir}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "api:":
			st.api = f[1]
		case "objects:":
			st.objects = f[1]
		case "data:":
			st.announcedData = strings.TrimPrefix(sc.Text(), "  data:    ")
		case "token:":
			st.token = f[1]
		case "callback":
			if len(f) > 2 && f[1] == "secret:" {
				st.callbackSecret = f[2]
			}
		}
		if st.token != "" && st.callbackSecret != "" {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	require.True(t, strings.HasPrefix(st.token, "trk_"), "the stack did not start")
	// The secrets the stack made at its first start must not reach a log.
	for _, f := range []string{StoreSecretFile, LinkSecretFile} {
		b, err := os.ReadFile(filepath.Join(st.data, f))
		require.NoError(t, err)
		logs.Secret(f, string(b))
	}
	logs.Secret("the stack's API token", st.token)
	require.True(t, strings.HasPrefix(st.callbackSecret, "whsec_"), "the first start shows the token's callback secret")
	logs.Secret("the stack's callback secret", st.callbackSecret)
	return st
}

// call makes a request to the stack's API with its token, decodes the
// answer into into (when not nil) and returns its status.
func (st stack) call(t *testing.T, method, path, body string, into any) int {
	t.Helper()
	req, err := http.NewRequest(method, st.api+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+st.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if into != nil {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(into))
	}
	return resp.StatusCode
}

// noRedirects is a client that shows a redirect instead of following it.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Every path gets the API's own JSON answer: a path with .. or // is not
// cleaned and redirected (307 to /etc/passwd, in HTML) but not found.
func TestRouterAnswersUncleanPathsWithTheAPIs404(t *testing.T) {
	st := startStack(t)
	for _, p := range []string{
		"/v1/jobs/../../etc/passwd", "/v1//jobs", "//v1/jobs", "/v1/jobs/%2e%2e/x", "/v1/jobs/./x",
		"/healthz/", "/telegram/webhook/../../v1/jobs",
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			req, err := http.NewRequest(method, st.api+p, nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+st.token)
			resp, err := noRedirects.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			_ = resp.Body.Close()
			require.Equal(t, http.StatusNotFound, resp.StatusCode, "%s %s: %s", method, p, body)
			require.Empty(t, resp.Header.Get("Location"), "%s %s", method, p)
			require.Equal(t, "application/json; charset=utf-8", resp.Header.Get("Content-Type"), "%s %s", method, p)
			var doc struct {
				Error struct{ Code string } `json:"error"`
			}
			require.NoError(t, json.Unmarshal(body, &doc), "%s %s: %s", method, p, body)
			require.Equal(t, "not_found", doc.Error.Code, "%s %s", method, p)
		}
	}
	resp, err := noRedirects.Get(st.api + "/healthz")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// The stack's object store takes only what is signed with the stack's own
// key, made at the first start and kept private; the API's upload URLs
// work, as a client uses them; browsers may call it from the API's origin
// and the origins configured only.
func TestObjectStoreIsStrict(t *testing.T) {
	st := startStack(t, "https://app.example")

	info, err := os.Stat(filepath.Join(st.data, StoreSecretFile))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	secret, err := os.ReadFile(filepath.Join(st.data, StoreSecretFile))
	require.NoError(t, err)
	require.Len(t, secret, 64)
	other := t.TempDir()
	again, err := localSecret(filepath.Join(other, StoreSecretFile))
	require.NoError(t, err)
	require.NotEqual(t, secret, again, "each data directory has its own key")
	kept, err := localSecret(filepath.Join(st.data, StoreSecretFile))
	require.NoError(t, err)
	require.Equal(t, secret, kept, "the key is kept")

	// A job, and its upload as docs/api.md does it (curl --upload-file).
	req, err := http.NewRequest(http.MethodPost, st.api+"/v1/jobs", strings.NewReader(`{"filename":"a.ogg","size_bytes":5}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+st.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var j struct {
		ID     string               `json:"id"`
		Upload struct{ URL string } `json:"upload"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&j))
	_ = resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)

	put := func(u, body string, header ...string) (int, http.Header) {
		req, err := http.NewRequest(http.MethodPut, u, strings.NewReader(body))
		require.NoError(t, err)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	status := func(code int, _ http.Header) int { return code }
	forged := j.Upload.URL[:len(j.Upload.URL)-2] + "00"
	if forged == j.Upload.URL {
		forged = j.Upload.URL[:len(j.Upload.URL)-2] + "11"
	}
	require.Equal(t, http.StatusForbidden, status(put(forged, "hello")))
	moved := strings.Replace(j.Upload.URL, "/sources/"+j.ID+"?", "/results/"+j.ID+".json?", 1)
	require.NotEqual(t, j.Upload.URL, moved)
	require.Equal(t, http.StatusForbidden, status(put(moved, "hello")))
	require.Equal(t, http.StatusForbidden, status(put(st.objects+"/"+Bucket+"/results/"+j.ID+".json", "hello")))
	resp, err = http.Get(st.objects + "/" + Bucket + "?list-type=2")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	for origin, allowed := range map[string]bool{st.api: true, "https://app.example": true, "https://evil.example": false} {
		req, err := http.NewRequest(http.MethodOptions, j.Upload.URL, nil)
		require.NoError(t, err)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", http.MethodPut)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		if allowed {
			require.Equal(t, http.StatusOK, resp.StatusCode, origin)
			require.Equal(t, origin, resp.Header.Get("Access-Control-Allow-Origin"))
		} else {
			require.Equal(t, http.StatusForbidden, resp.StatusCode, origin)
			require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	}

	code, header := put(j.Upload.URL, "hello", "Origin", st.api)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, st.api, header.Get("Access-Control-Allow-Origin"))
}

// Only uploads start ingest: objects the stack writes itself (converted
// audio, the accepted copy of a source, results) make no event, as the
// cloud trigger's prefix filter sees none of them.
func TestOnlySourcesMakeEvents(t *testing.T) {
	q := newQueue()
	hook := sourceEvents(q)
	for _, key := range []string{"audio/j1/source", "audio/j1/000.ogg", "results/j1.json", "sourcesX", "x/sources/j1", "sources/j1"} {
		hook(Bucket, key, 1)
	}
	q.close()
	var got []string
	for {
		ev, ok := q.pop()
		if !ok {
			break
		}
		got = append(got, ev.Messages[0].Details.ObjectID)
		require.Equal(t, trigger.TypeObjectCreate, ev.Messages[0].Metadata.EventType)
	}
	require.Equal(t, []string{"sources/j1"}, got)
}

func TestOriginOf(t *testing.T) {
	require.Equal(t, "https://tunnel.example", originOf("https://tunnel.example/base/"))
	require.Equal(t, "http://127.0.0.1:8080", originOf("http://127.0.0.1:8080"))
	require.Empty(t, originOf(""))
	require.Empty(t, originOf("not a url"))
}

// net/http's complaints reach the log as JSON.
func TestServerErrorLogIsJSON(t *testing.T) {
	var buf bytes.Buffer
	srv := newServer(http.NotFoundHandler(), slog.New(slog.NewJSONHandler(&buf, nil)))
	require.NotNil(t, srv.ErrorLog)
	srv.ErrorLog.Printf("http: superfluous response.WriteHeader call from somewhere")
	var line struct{ Level, Msg string }
	require.NoError(t, json.Unmarshal(buf.Bytes(), &line), "%s", buf.String())
	require.Equal(t, "WARN", line.Level)
	require.Contains(t, line.Msg, "superfluous")
}

// The start names the data directory by its absolute path, also when
// DATA_DIR is relative, as the default ./data is.
func TestAnnouncesTheDataDirectoryWhole(t *testing.T) {
	dir := t.TempDir()
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(dir))
	t.Cleanup(func() { require.NoError(t, os.Chdir(wd)) })

	st := startStackWith(t, func(c *Config) { c.DataDir = "data" })
	require.True(t, filepath.IsAbs(st.announcedData), "data: %q", st.announcedData)
	want, err := filepath.EvalSymlinks(filepath.Join(dir, "data"))
	require.NoError(t, err)
	got, err := filepath.EvalSymlinks(st.announcedData)
	require.NoError(t, err)
	require.Equal(t, want, got)
}
