package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/httpapi"
	"transcriber/internal/httpapi/openapitest"
	"transcriber/internal/ident"
	"transcriber/internal/job"
	"transcriber/internal/uploadlink"
)

var linkSecret = []byte("upload-link-secret-for-the-tests-0123456789")

// tgJob records a Telegram job waiting for a file of size bytes, as the
// bot does for a file over 20 MB.
func (h *harness) tgJob(msg int64, size int64, filename string) job.Job {
	h.t.Helper()
	j, created, err := h.jobs.CreateForMessage(context.Background(), job.Draft{
		Source: job.SourceTelegram, TelegramChatID: 42, TelegramMessageID: msg,
		SizeBytes: size, ContentType: "audio/ogg", Filename: filename, UploadWindow: 24 * time.Hour,
	})
	require.NoError(h.t, err)
	require.True(h.t, created)
	return j
}

// link is the page's path and query for job id under the test secret.
func link(id string) string {
	u, err := url.Parse(uploadlink.URL("http://api.example", linkSecret, id))
	if err != nil {
		panic(err)
	}
	return u.RequestURI()
}

// sub is the link with suffix added to its path: /upload/<id>/status?t=….
func sub(link, suffix string) string {
	p, q, _ := strings.Cut(link, "?")
	return p + suffix + "?" + q
}

// move takes a job through the pipeline's states, as its steps would; a
// failure is no_audio_stream.
func (h *harness) move(id string, states ...job.State) {
	h.t.Helper()
	for _, s := range states {
		if s == job.Failed {
			h.fail(id, "no_audio_stream", "the file has no sound to transcribe")
			continue
		}
		h.save(id, s, "", "")
	}
}

func (h *harness) fail(id, code, message string) { h.t.Helper(); h.save(id, job.Failed, code, message) }

func (h *harness) save(id string, s job.State, code, message string) {
	h.t.Helper()
	ctx := context.Background()
	c, err := h.jobs.Claim(ctx, id, job.Step{Name: "test", From: job.States, Lease: time.Minute})
	require.NoError(h.t, err)
	c.State, c.ErrorCode, c.ErrorMessage = s, code, message
	_, err = h.jobs.Save(ctx, c, job.Next{})
	require.NoError(h.t, err)
}

const uploadBody = `{"size_bytes": 11, "content_type": "audio/ogg"}`

func TestUploadLinkOpensOnlyItsOwnTelegramJob(t *testing.T) {
	h := newHarness(t, httpapi.Config{UploadLinkSecret: linkSecret})
	_, secret := h.token("api")
	mine := h.tgJob(1, 11, "talk.ogg")
	other := h.tgJob(2, 11, "other.ogg")
	var apiJob jobReply
	h.do(http.MethodPost, "/v1/jobs", secret, createBody).json(t, &apiJob)

	require.Equal(t, http.StatusOK, h.do(http.MethodGet, link(mine.ID), "", "").status, "the job's own link opens")

	base := "/upload/" + mine.ID
	unknown := ident.New()
	refused := map[string]string{
		"no token":                 base,
		"empty token":              base + "?t=",
		"wrong token":              base + "?t=" + strings.Repeat("A", 22),
		"another job's token":      base + "?t=" + url.QueryEscape(uploadlink.Token(linkSecret, other.ID)),
		"another secret's token":   base + "?t=" + url.QueryEscape(uploadlink.Token([]byte("another secret, just as long as the other"), mine.ID)),
		"the token twice, one bad": base + "?t=x&t=" + url.QueryEscape(uploadlink.Token(linkSecret, mine.ID)),
		"an API job's own token":   link(apiJob.ID),
		"no such job":              link(unknown),
		"a malformed id's token":   link("not-an-id"),
	}
	var first []byte
	for _, suffix := range []string{"", "/status"} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			if suffix == "/status" && method == http.MethodPost {
				continue
			}
			for name, path := range refused {
				body := ""
				if method == http.MethodPost {
					body = uploadBody
				}
				r := h.do(method, sub(path, suffix), "", body)
				require.Equal(t, http.StatusNotFound, r.status, "%s %s: %s", method, name, r.body)
				require.Equal(t, "job_not_found", r.errorCode(t), name)
				if first == nil {
					first = r.body
				}
				require.Equal(t, string(first), string(r.body), "%s %s: every refusal is the same answer", method, name)
			}
		}
	}
	require.False(t, h.s3.Has(job.SourceKey(mine.ID)))

	// A link without its token costs no store read.
	before := h.jobs.calls.Load()
	for i := 0; i < 3; i++ {
		h.do(http.MethodGet, base+"?t=guess"+strconv.Itoa(i), "", "")
	}
	require.Equal(t, before, h.jobs.calls.Load())
}

func TestUploadLinksAreOffWithoutASecret(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	j := h.tgJob(1, 11, "talk.ogg")
	for _, path := range []string{link(j.ID), sub(link(j.ID), "/status")} {
		r := h.do(http.MethodGet, path, "", "")
		require.Equal(t, http.StatusNotFound, r.status, path)
		require.Equal(t, "not_found", r.errorCode(t))
	}
	r := h.do(http.MethodPost, link(j.ID), "", uploadBody)
	require.Equal(t, http.StatusNotFound, r.status)
}

func TestUploadLinkSignsAnUploadOnlyWhileTheJobWaits(t *testing.T) {
	h := newHarness(t, httpapi.Config{UploadLinkSecret: linkSecret, UploadURLTTL: 10 * time.Minute})
	j := h.tgJob(1, 11, "talk.ogg")
	r := h.do(http.MethodPost, link(j.ID), "", uploadBody)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Equal(t, "no-store", r.header.Get("Cache-Control"))
	var got struct {
		Upload struct {
			Method    string            `json:"method"`
			URL       string            `json:"url"`
			Headers   map[string]string `json:"headers"`
			ExpiresAt time.Time         `json:"expires_at"`
		} `json:"upload"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&got), "only the upload: %s", r.body)
	up := got.Upload
	require.Equal(t, http.MethodPut, up.Method)
	require.Equal(t, map[string]string{"Content-Length": "11", "Content-Type": "audio/ogg"}, up.Headers, "the job's size and type are signed")
	require.WithinDuration(t, h.clk.Now().Add(10*time.Minute), up.ExpiresAt, time.Second)
	u, err := url.Parse(up.URL)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(u.Path, "/sources/"+j.ID))
	require.Equal(t, "600", u.Query().Get("X-Amz-Expires"))
	require.NotContains(t, string(r.body), uploadlink.Token(linkSecret, j.ID), "the answer does not repeat the link's token")

	// Asking again (a reload, a second try) signs again while nothing came.
	require.Equal(t, http.StatusOK, h.do(http.MethodPost, link(j.ID), "", uploadBody).status)

	req, err := http.NewRequest(up.Method, up.URL, strings.NewReader("hello world"))
	require.NoError(t, err)
	for k, v := range up.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, []byte("hello world"), h.s3.Object(t, job.SourceKey(j.ID)))

	// Once ingest has the file, the link signs nothing more.
	h.move(j.ID, job.Created)
	r = h.do(http.MethodPost, link(j.ID), "", uploadBody)
	require.Equal(t, http.StatusConflict, r.status, "%s", r.body)
	require.Equal(t, "already_uploaded", r.errorCode(t))
	h.move(j.ID, job.Converted, job.Transcribe, job.Done)
	r = h.do(http.MethodPost, link(j.ID), "", uploadBody)
	require.Equal(t, http.StatusConflict, r.status)
	require.Equal(t, "already_uploaded", r.errorCode(t))
}

func TestUploadLinkRefusesAnotherSizeWithBothNumbers(t *testing.T) {
	h := newHarness(t, httpapi.Config{UploadLinkSecret: linkSecret})
	j := h.tgJob(1, 25_000_000, "talk.ogg")
	r := h.do(http.MethodPost, link(j.ID), "", `{"size_bytes": 24999999, "content_type": "audio/ogg"}`)
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	require.Equal(t, "size_mismatch", r.errorCode(t))
	require.Contains(t, string(r.body), "24999999")
	require.Contains(t, string(r.body), "25000000")

	for name, tc := range map[string]struct{ body, code string }{
		"no size":       {`{"content_type": "audio/ogg"}`, "bad_size"},
		"unknown field": {`{"size_bytes": 25000000, "filename": "x"}`, "bad_json"},
		"not JSON":      {`size=25000000`, "bad_json"},
		"bad type":      {`{"size_bytes": 25000000, "content_type": "not a type"}`, "bad_content_type"},
	} {
		r := h.do(http.MethodPost, link(j.ID), "", tc.body)
		require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", name, r.body)
		require.Equal(t, tc.code, r.errorCode(t), name)
	}
	// The browser's own type for the file does not change what is signed.
	r = h.do(http.MethodPost, link(j.ID), "", `{"size_bytes": 25000000, "content_type": "audio/x-opus+ogg"}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Contains(t, string(r.body), `"Content-Type":"audio/ogg"`)
	require.False(t, h.s3.Has(job.SourceKey(j.ID)))
}

func TestUploadLinkOfAJobOfUnknownSizeSignsThePickedSize(t *testing.T) {
	h := newHarness(t, httpapi.Config{UploadLinkSecret: linkSecret})
	j := h.tgJob(1, 0, "talk.ogg")
	r := h.do(http.MethodPost, link(j.ID), "", `{"size_bytes": 1234}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Contains(t, string(r.body), `"Content-Length":"1234"`)
	r = h.do(http.MethodPost, link(j.ID), "", `{"size_bytes": 5368709121}`)
	require.Equal(t, http.StatusBadRequest, r.status)
	require.Equal(t, "too_large", r.errorCode(t))
}

func TestUploadLinkExpiresWithTheUploadWindow(t *testing.T) {
	h := newHarness(t, httpapi.Config{UploadLinkSecret: linkSecret})
	j := h.tgJob(1, 11, "talk.ogg")
	h.clk.Advance(24*time.Hour - time.Second)
	require.Equal(t, http.StatusOK, h.do(http.MethodPost, link(j.ID), "", uploadBody).status, "open until the window closes")
	h.clk.Advance(time.Second)
	r := h.do(http.MethodPost, link(j.ID), "", uploadBody)
	require.Equal(t, http.StatusConflict, r.status, "%s", r.body)
	require.Equal(t, "link_expired", r.errorCode(t))

	page := h.do(http.MethodGet, link(j.ID), "", "")
	require.Equal(t, http.StatusOK, page.status, "the page still opens, to say so")
	require.Contains(t, string(page.body), `data-closed="link_expired"`)
	require.Contains(t, page.header.Get("Content-Security-Policy"), "connect-src 'self';", "nothing to upload: no storage origin")

	// Once the pipeline has swept it, it is still the expired link.
	h.fail(j.ID, "upload_missing", "the file was never uploaded")
	r = h.do(http.MethodPost, link(j.ID), "", uploadBody)
	require.Equal(t, http.StatusConflict, r.status)
	require.Equal(t, "link_expired", r.errorCode(t))
	require.Contains(t, string(h.do(http.MethodGet, link(j.ID), "", "").body), `data-closed="link_expired"`)
}

func TestUploadLinkOfADeletedJob(t *testing.T) {
	h := newHarness(t, httpapi.Config{UploadLinkSecret: linkSecret})
	j := h.tgJob(1, 11, "talk.ogg")
	_, err := h.jobs.Delete(context.Background(), j.ID)
	require.NoError(t, err)
	r := h.do(http.MethodPost, link(j.ID), "", uploadBody)
	require.Equal(t, http.StatusConflict, r.status, "%s", r.body)
	require.Equal(t, "job_deleted", r.errorCode(t))
	r = h.do(http.MethodGet, sub(link(j.ID), "/status"), "", "")
	require.Equal(t, http.StatusOK, r.status)
	require.JSONEq(t, `{"state": "failed", "error_message": "the job was deleted"}`, string(r.body))
	require.Contains(t, string(h.do(http.MethodGet, link(j.ID), "", "").body), `data-closed="job_deleted"`)
}

func TestUploadLinkStatus(t *testing.T) {
	h := newHarness(t, httpapi.Config{UploadLinkSecret: linkSecret})
	j := h.tgJob(1, 11, "talk.ogg")
	status := func() string {
		t.Helper()
		r := h.do(http.MethodGet, sub(link(j.ID), "/status"), "", "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Equal(t, "application/json; charset=utf-8", r.header.Get("Content-Type"))
		require.Equal(t, "no-store", r.header.Get("Cache-Control"))
		return string(r.body)
	}
	require.JSONEq(t, `{"state": "awaiting_upload", "progress": 0}`, status())
	h.move(j.ID, job.Created)
	require.JSONEq(t, `{"state": "created", "progress": 10}`, status())
	h.move(j.ID, job.Failed)
	require.JSONEq(t, `{"state": "failed", "error_message": "the file has no sound to transcribe"}`, status(), "a failed job claims no progress")

	done := h.tgJob(2, 11, "done.ogg")
	h.move(done.ID, job.Created, job.Converted, job.Transcribe, job.Done)
	r := h.do(http.MethodGet, sub(link(done.ID), "/status"), "", "")
	require.JSONEq(t, `{"state": "done", "progress": 100}`, string(r.body), "no transcript links, no ids")

	r = h.do(http.MethodPost, sub(link(j.ID), "/status"), "", uploadBody, openapitest.OffDocument, "yes")
	require.Equal(t, http.StatusMethodNotAllowed, r.status)
}

var (
	scriptRe = regexp.MustCompile(`(?s)<script>(.*?)</script>`)
	styleRe  = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
	// urlRe finds anything in the page that a browser could fetch or
	// navigate to.
	urlRe = regexp.MustCompile(`(?i)(?:src|href|action)\s*=\s*["']?([^"' >]+)|url\(|https?://|["'(]//`)
)

func hashSource(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

func TestUploadPage(t *testing.T) {
	h := newHarness(t, httpapi.Config{UploadLinkSecret: linkSecret})
	j := h.tgJob(1, 26_214_400, `<b>Interview</b> "May".ogg`)
	r := h.do(http.MethodGet, link(j.ID), "", "")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	page := string(r.body)

	require.Equal(t, "text/html; charset=utf-8", r.header.Get("Content-Type"))
	require.Equal(t, "no-store", r.header.Get("Cache-Control"))
	require.Equal(t, "no-referrer", r.header.Get("Referrer-Policy"))
	require.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"))
	csp := r.header.Get("Content-Security-Policy")
	require.Contains(t, csp, "default-src 'none'")
	require.Contains(t, csp, "frame-ancestors 'none'")
	require.NotContains(t, csp, "unsafe-inline")
	require.NotContains(t, csp, "unsafe-eval")

	// The one script and the one style are allowed by their hashes, and
	// they are the ones served.
	scripts := scriptRe.FindAllStringSubmatch(page, -1)
	require.Len(t, scripts, 1)
	require.Contains(t, csp, "script-src "+hashSource(scripts[0][1])+";")
	styles := styleRe.FindAllStringSubmatch(page, -1)
	require.Len(t, styles, 1)
	require.Contains(t, csp, "style-src "+hashSource(styles[0][1])+";")
	require.NotContains(t, page, " style=", "no inline style attributes: the CSP would block them")
	// The script talks to the API and to the storage, nothing else.
	s3 := h.s3.Config().Endpoint
	require.Contains(t, csp, "connect-src 'self' "+s3+";")

	// The page carries no token at all, and fetches nothing from outside.
	require.NotContains(t, page, uploadlink.Token(linkSecret, j.ID))
	require.NotContains(t, page, url.QueryEscape(uploadlink.Token(linkSecret, j.ID)))
	for _, m := range urlRe.FindAllStringSubmatch(page, -1) {
		require.Equal(t, "data:,", m[1], "only the empty icon is a URL: %q", m[0])
	}
	require.NotContains(t, page, j.ID, "the page finds its routes from its address")

	// The file expected, escaped; its size in both languages.
	require.Contains(t, page, `&lt;b&gt;Interview&lt;/b&gt; &#34;May&#34;.ogg`)
	require.NotContains(t, page, "<b>Interview")
	require.Contains(t, page, "25.0 MB (26214400 bytes)")
	require.Contains(t, page, "25,0 МБ (26214400 байт)")
	require.Contains(t, page, `data-size="26214400"`)
	require.Contains(t, page, `data-state="awaiting_upload"`)
	require.Contains(t, page, `data-closed=""`)
	require.Contains(t, page, `<input type="file" id="file">`)
	require.Less(t, len(page), 16<<10, "a small page")

	// Once the file is in, the page only follows the job.
	h.move(j.ID, job.Created)
	r = h.do(http.MethodGet, link(j.ID), "", "")
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, string(r.body), `data-closed="already_uploaded"`)
	require.Contains(t, r.header.Get("Content-Security-Policy"), "connect-src 'self';")
}

// Behind API Gateway the token comes in the event's query parameters
// (payload format 1.0: path is the request's own path).
func TestUploadPageThroughTheGateway(t *testing.T) {
	h := newHarness(t, httpapi.Config{UploadLinkSecret: linkSecret})
	j := h.tgJob(1, 11, "talk.ogg")
	tok := uploadlink.Token(linkSecret, j.ID)
	got := h.gateway(event(t, `{"version": "1.0", "httpMethod": "GET", "resource": "/upload/{id}",
		"path": "/upload/`+j.ID+`", "pathParameters": {"id": "`+j.ID+`"},
		"queryStringParameters": {"t": "`+tok+`"}, "multiValueQueryStringParameters": {"t": ["`+tok+`"]}}`))
	require.Equal(t, http.StatusOK, got.StatusCode, got.Body)
	require.Equal(t, "text/html; charset=utf-8", got.Headers["Content-Type"])
	require.False(t, got.IsBase64Encoded)
	require.Contains(t, got.Body, "talk.ogg")

	got = h.gateway(event(t, `{"version": "1.0", "httpMethod": "GET", "resource": "/upload/{id}/status",
		"path": "/upload/`+j.ID+`/status", "pathParameters": {"id": "`+j.ID+`"},
		"queryStringParameters": {"t": "`+tok+`"}}`))
	require.JSONEq(t, `{"state": "awaiting_upload", "progress": 0}`, got.Body)
}
