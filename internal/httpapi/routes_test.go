package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/httpapi"
	"transcriber/internal/httpapi/openapitest"
	"transcriber/internal/ident"
	"transcriber/internal/job"
)

func TestCreateSignsAnUploadOfTheExactSize(t *testing.T) {
	h := newHarness(t, httpapi.Config{UploadURLTTL: 10 * time.Minute})
	_, secret := h.token("ci")
	r := h.do(http.MethodPost, "/v1/jobs", secret, createBody)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	var j jobReply
	r.json(t, &j)
	require.Equal(t, "awaiting_upload", j.State)
	require.Equal(t, "ru-RU", j.Language, "the default language")
	require.Equal(t, "/v1/jobs/"+j.ID, r.header.Get("Location"))
	require.NotNil(t, j.Upload)
	require.Equal(t, http.MethodPut, j.Upload.Method)
	require.WithinDuration(t, h.clk.Now().Add(10*time.Minute), j.Upload.ExpiresAt, time.Second)
	u, err := url.Parse(j.Upload.URL)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(u.Path, "/sources/"+j.ID), "the key is sources/<id>")
	require.Contains(t, u.Query().Get("X-Amz-SignedHeaders"), "content-length")
	require.Equal(t, "600", u.Query().Get("X-Amz-Expires"))

	// The upload with the signed headers lands in sources/<id>.
	req, err := http.NewRequest(j.Upload.Method, j.Upload.URL, strings.NewReader("hello world"))
	require.NoError(t, err)
	for k, v := range j.Upload.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, []byte("hello world"), h.s3.Object(t, job.SourceKey(j.ID)))
}

func TestCreateRefusesBadRequestsAndCreatesNothing(t *testing.T) {
	h := newHarness(t, httpapi.Config{MaxBodyBytes: 512})
	tok, secret := h.token("ci")
	cases := []struct {
		name, body, code string
		status           int
		header           []string
	}{
		{"over the size limit", `{"filename":"a.wav","size_bytes":5368709121}`, "too_large", 400, nil},
		{"unknown language", `{"filename":"a.wav","size_bytes":10,"language":"xx-XX"}`, "unknown_language", 400, nil},
		{"unknown field", `{"filename":"a.wav","size_bytes":10,"owner":"me"}`, "bad_json", 400, nil},
		{"not JSON", `filename=a.wav`, "bad_json", 400, nil},
		{"two objects", `{"filename":"a.wav","size_bytes":10}{}`, "bad_json", 400, nil},
		{"no size", `{"filename":"a.wav"}`, "bad_size", 400, nil},
		{"no filename", `{"size_bytes":10}`, "bad_filename", 400, nil},
		{"a size that is text", `{"filename":"a.wav","size_bytes":"10"}`, "bad_json", 400, nil},
		{"too big a body", `{"filename":"` + strings.Repeat("a", 600) + `","size_bytes":10}`, "body_too_large", 413, nil},
		{"not JSON by type", `{"filename":"a.wav","size_bytes":10}`, "unsupported_media_type", 415, []string{"Content-Type", "text/plain"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodPost, "/v1/jobs", secret, tc.body, tc.header...)
			require.Equal(t, tc.status, r.status, "%s", r.body)
			require.Equal(t, tc.code, r.errorCode(t))
		})
	}
	page, err := h.jobs.List(context.Background(), tok.ID, "", job.MaxListLimit)
	require.NoError(t, err)
	require.Empty(t, page.Jobs, "nothing was created")
}

// A filename is shown back to people, so a name with a character that
// changes how it shows (a control character, a bidirectional override or
// isolate) is refused with words that say why, and no job is made. Names
// in any script, with marks that show as themselves, are taken; spaces and
// line breaks at either end are trimmed off, not refused.
func TestCreateRefusesFilenamesThatHideWhatTheyAre(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	tok, secret := h.token("ci")
	for _, name := range []string{
		`a\u202egpm.exe\u001b[31m`,                                                         // shows as "aexe.mpg", then colours the terminal red
		`a\u0000b.ogg`, `a\nb.ogg`, `a\rb.ogg`, `a\tb.ogg`, `a\u001fb.ogg`, `a\u007fb.ogg`, // C0 and DEL
		`a\u0080b.ogg`, `a\u0085b.ogg`, `a\u009bb.ogg`, `a\u009fb.ogg`, // C1
		`\u202aa.ogg`, `a\u202bb.ogg`, `a\u202cb.ogg`, `a\u202db.ogg`, `a\u202eb.ogg`, // embeddings and overrides
		`a\u2066b.ogg`, `a\u2067b.ogg`, `a\u2068b.ogg`, `a\u2069b.ogg`, // isolates
	} {
		r := h.do(http.MethodPost, "/v1/jobs", secret, `{"filename":"`+name+`","size_bytes":10}`)
		require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", name, r.body)
		require.Equal(t, "bad_filename", r.errorCode(t), name)
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		r.json(t, &e)
		require.Contains(t, e.Error.Message, "control characters", name)
		require.Contains(t, e.Error.Message, "direction of text", name)
	}
	page, err := h.jobs.List(context.Background(), tok.ID, "", job.MaxListLimit)
	require.NoError(t, err)
	require.Empty(t, page.Jobs, "nothing was created")

	for name, stored := range map[string]string{
		"Запись интервью 🎙.m4a": "Запись интервью 🎙.m4a", "مقابلة.ogg": "مقابلة.ogg",
		"a – c\u00a0d.ogg": "a – c\u00a0d.ogg", ` padded.ogg\n`: "padded.ogg",
	} {
		r := h.do(http.MethodPost, "/v1/jobs", secret, `{"filename":"`+name+`","size_bytes":10}`)
		require.Equal(t, http.StatusCreated, r.status, "%s: %s", name, r.body)
		var j jobReply
		r.json(t, &j)
		require.Equal(t, stored, j.Filename)
	}
}

func TestIdempotencyKeyMakesOneJob(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	tok, secret := h.token("ci")
	first := h.do(http.MethodPost, "/v1/jobs", secret, createBody, "Idempotency-Key", "k-1")
	require.Equal(t, http.StatusCreated, first.status)
	again := h.do(http.MethodPost, "/v1/jobs", secret, createBody, "Idempotency-Key", "k-1")
	require.Equal(t, http.StatusOK, again.status, "a retry answers 200 with the same job")
	var a, b jobReply
	first.json(t, &a)
	again.json(t, &b)
	require.Equal(t, a.ID, b.ID)
	require.NotNil(t, b.Upload, "a retry gets an upload URL too")

	other := h.do(http.MethodPost, "/v1/jobs", secret, `{"filename":"other.ogg","size_bytes":11}`, "Idempotency-Key", "k-1")
	require.Equal(t, http.StatusConflict, other.status)
	require.Equal(t, "idempotency_key_reused", other.errorCode(t))

	page, err := h.jobs.List(context.Background(), tok.ID, "", job.MaxListLimit)
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
}

func TestACallerSeesOnlyItsOwnJobs(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, alice := h.token("alice")
	_, bob := h.token("bob")
	var mine jobReply
	h.do(http.MethodPost, "/v1/jobs", alice, createBody).json(t, &mine)

	for _, path := range []string{"/v1/jobs/" + mine.ID, "/v1/jobs/" + mine.ID + "/transcript"} {
		r := h.do(http.MethodGet, path, bob, "")
		require.Equal(t, http.StatusNotFound, r.status, "another's job is not found, not forbidden")
		require.Equal(t, "job_not_found", r.errorCode(t))
	}
	r := h.do(http.MethodDelete, "/v1/jobs/"+mine.ID, bob, "")
	require.Equal(t, http.StatusNotFound, r.status)

	var list struct {
		Jobs []jobReply `json:"jobs"`
	}
	h.do(http.MethodGet, "/v1/jobs", bob, "").json(t, &list)
	require.Empty(t, list.Jobs)
	h.do(http.MethodGet, "/v1/jobs", alice, "").json(t, &list)
	require.Len(t, list.Jobs, 1)
	require.Equal(t, mine.ID, list.Jobs[0].ID)
}

func TestListPagesNewestFirst(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, secret := h.token("ci")
	var ids []string
	for i := 0; i < 5; i++ {
		var j jobReply
		h.do(http.MethodPost, "/v1/jobs", secret, createBody).json(t, &j)
		ids = append([]string{j.ID}, ids...)
	}
	var got []string
	cursor := ""
	for {
		var page struct {
			Jobs       []jobReply `json:"jobs"`
			NextCursor string     `json:"next_cursor"`
		}
		r := h.do(http.MethodGet, "/v1/jobs?limit=2&cursor="+cursor, secret, "")
		require.Equal(t, http.StatusOK, r.status)
		r.json(t, &page)
		for _, j := range page.Jobs {
			got = append(got, j.ID)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	require.Equal(t, ids, got)
	require.Equal(t, "bad_limit", h.do(http.MethodGet, "/v1/jobs?limit=1000", secret, "").errorCode(t))
	require.Equal(t, "job_invalid", h.do(http.MethodGet, "/v1/jobs?cursor=nope", secret, "").errorCode(t))
}

func TestTokens(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	tok, secret := h.token("ci")

	require.Equal(t, http.StatusOK, h.do(http.MethodGet, "/v1/jobs", secret, "").status, "Bearer")
	r := h.do(http.MethodGet, "/v1/jobs", "", "", "X-Api-Key", secret)
	require.Equal(t, http.StatusOK, r.status, "X-Api-Key, for a gateway that does not pass Authorization on")

	for name, hdr := range map[string][]string{
		"no token":       nil,
		"wrong token":    {"Authorization", "Bearer trk_" + strings.Repeat("A", 43)},
		"not a token":    {"X-Api-Key", "hunter2"},
		"another scheme": {"Authorization", "Basic " + secret},
	} {
		r := h.do(http.MethodGet, "/v1/jobs", "", "", hdr...)
		require.Equal(t, http.StatusUnauthorized, r.status, name)
		require.Equal(t, "unauthorized", r.errorCode(t), name)
		require.NotEmpty(t, r.header.Get("WWW-Authenticate"))
		require.NotContains(t, string(r.body), secret)
	}

	_, err := h.tokens.Revoke(context.Background(), tok.ID, h.clk.Now())
	require.NoError(t, err)
	r = h.do(http.MethodGet, "/v1/jobs", secret, "")
	require.Equal(t, http.StatusUnauthorized, r.status, "a revoked token is refused")

	require.Equal(t, http.StatusOK, h.do(http.MethodGet, "/healthz", "", "").status, "health needs no token")
}

func TestMalformedIDIsNotFoundWithoutAStoreCall(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, secret := h.token("ci")
	for _, id := range []string{"42", "not-an-id", strings.Repeat("z", 26), ident.New() + "x", "%2e%2e"} {
		for _, path := range []string{"/v1/jobs/" + id, "/v1/jobs/" + id + "/transcript"} {
			r := h.do(http.MethodGet, path, secret, "")
			require.Equal(t, http.StatusNotFound, r.status, path)
			require.Contains(t, []string{"job_not_found", "not_found"}, r.errorCode(t), path)
		}
		r := h.do(http.MethodDelete, "/v1/jobs/"+id, secret, "")
		require.Equal(t, http.StatusNotFound, r.status, id)
	}
	require.Zero(t, h.jobs.calls.Load(), "no malformed id reached the store")
	r := h.do(http.MethodGet, "/v1/jobs/"+ident.New(), secret, "")
	require.Equal(t, http.StatusNotFound, r.status)
	require.Equal(t, int64(1), h.jobs.calls.Load(), "a well-formed one does")
}

func TestEveryErrorHasTheOneShape(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	_, secret := h.token("ci")
	var j jobReply
	h.do(http.MethodPost, "/v1/jobs", secret, createBody).json(t, &j)
	// Routes and methods the document lacks (API Gateway answers them
	// itself) are marked off the document; the others are checked
	// against it.
	off := []string{openapitest.OffDocument, "yes"}
	cases := []struct {
		method, path string
		status       int
		code         string
		hdr          []string
	}{
		{http.MethodGet, "/nowhere", 404, "not_found", off},
		{http.MethodGet, "/v1//jobs", 404, "not_found", off},
		{http.MethodGet, "/v1/jobs/./" + j.ID, 404, "not_found", off},
		{http.MethodGet, "/v1/jobs/" + j.ID + "/nowhere", 404, "not_found", off},
		{http.MethodPut, "/v1/jobs", 405, "method_not_allowed", off},
		{http.MethodPatch, "/v1/jobs/" + j.ID, 405, "method_not_allowed", off},
		{http.MethodGet, "/v1/jobs/" + j.ID + "/transcript", 409, "not_done", nil},
		{http.MethodGet, "/v1/jobs/" + j.ID + "/transcript?format=docx", 400, "bad_format", nil},
	}
	for _, tc := range cases {
		r := h.do(tc.method, tc.path, secret, "", tc.hdr...)
		require.Equal(t, tc.status, r.status, "%s %s: %s", tc.method, tc.path, r.body)
		require.Equal(t, tc.code, r.errorCode(t), "%s %s", tc.method, tc.path)
	}
	require.Equal(t, "POST, GET", h.do(http.MethodPut, "/v1/jobs", secret, "", off...).header.Get("Allow"))
}

func TestDeleteRemovesTheFilesAndSaysDeleted(t *testing.T) {
	h := newHarness(t, httpapi.Config{})
	tok, secret := h.token("ci")
	var j jobReply
	h.do(http.MethodPost, "/v1/jobs", secret, createBody).json(t, &j)
	ctx := context.Background()
	require.NoError(t, h.objects.Put(ctx, job.SourceKey(j.ID), []byte("hello world"), ""))
	// Walk the job to a recognition in flight, with converted audio.
	c, err := h.jobs.Claim(ctx, j.ID, job.Ingest)
	require.NoError(t, err)
	c.State = job.Created
	c, err = h.jobs.Save(ctx, c, job.Next{Keep: true})
	require.NoError(t, err)
	c.State = job.Converted
	c.Segments = []job.Segment{{Seq: 0, AudioKey: job.AudioKey(j.ID, 0), Container: "OGG_OPUS", OperationID: "op-1"}}
	_, err = h.jobs.Save(ctx, c, job.Next{})
	require.NoError(t, err)
	require.NoError(t, h.objects.Put(ctx, job.AudioKey(j.ID, 0), []byte("ogg"), ""))

	r := h.do(http.MethodDelete, "/v1/jobs/"+j.ID, secret, "")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var d jobReply
	r.json(t, &d)
	require.NotNil(t, d.DeletedAt)
	require.Equal(t, "failed", d.State)
	require.False(t, h.s3.Has(job.SourceKey(j.ID)))
	require.False(t, h.s3.Has(job.AudioKey(j.ID, 0)))
	require.Equal(t, []string{"op-1"}, h.recs.deleted)

	r = h.do(http.MethodGet, "/v1/jobs/"+j.ID+"/transcript", secret, "")
	require.Equal(t, http.StatusGone, r.status)
	require.Equal(t, "deleted", r.errorCode(t))
	require.Equal(t, http.StatusOK, h.do(http.MethodDelete, "/v1/jobs/"+j.ID, secret, "").status, "deleting again is fine")
	_ = tok
}

func TestCORS(t *testing.T) {
	h := newHarness(t, httpapi.Config{CORSOrigins: []string{"https://app.example"}})
	// A preflight: API Gateway answers it (x-yc-apigateway's cors), the
	// local stack passes it on; no operation of the document takes it.
	r := h.do(http.MethodOptions, "/v1/jobs", "", "", "Origin", "https://app.example", "Access-Control-Request-Method", "POST",
		openapitest.OffDocument, "yes")
	require.Equal(t, http.StatusNoContent, r.status)
	require.Equal(t, "https://app.example", r.header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, r.header.Get("Access-Control-Allow-Headers"), "Idempotency-Key")
	r = h.do(http.MethodGet, "/healthz", "", "", "Origin", "https://evil.example")
	require.Empty(t, r.header.Get("Access-Control-Allow-Origin"))
}
