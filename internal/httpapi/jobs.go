package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"transcriber/internal/apitoken"
	"transcriber/internal/callback"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/spend"
	"transcriber/internal/storage/s3"
	"transcriber/internal/transcript"
)

type createRequest struct {
	Filename    string       `json:"filename"`
	SizeBytes   int64        `json:"size_bytes"`
	ContentType string       `json:"content_type,omitempty"`
	Language    string       `json:"language,omitempty"`
	Priority    job.Priority `json:"priority,omitempty"` // "" is normal
	Speakers    bool         `json:"speakers,omitempty"`
	Summary     bool         `json:"summary,omitempty"`
	CallbackURL string       `json:"callback_url,omitempty"`
	Reuse       *bool        `json:"reuse,omitempty"` // false: job.Features.NoReuse
}

const codeBadFilename = "bad_filename"

var (
	errIdemReuse        = errs.New(errs.Conflict, "idempotency_key_reused", "this Idempotency-Key was used for a different request")
	errTooLarge         = errs.New(errs.Invalid, "too_large", "the file is larger than the service takes")
	errBadLanguage      = errs.New(errs.Invalid, "unknown_language", "the language is not one the recognizer knows")
	errBadContentType   = errs.New(errs.Invalid, "bad_content_type", "content_type is not a media type")
	errBadPriority      = errs.New(errs.Invalid, "job_invalid", `priority must be "normal", "deferred" or "fast"`)
	errNoSummaries      = errs.New(errs.Invalid, "summary_unavailable", "summaries are not set up on this installation")
	errNoCallbackSecret = errs.New(errs.Invalid, "token_without_callback_secret",
		"this API token has no callback secret (it was made before callbacks existed): make a new token to use callback_url")
	errNoCallbacks = errs.New(errs.Unavailable, "callbacks_unavailable", "callbacks are not available on this installation")
	errExpired     = errs.New(errs.NotFound, codeExpired, "the transcript has expired: it is kept for a limited time after the job is done, and is no longer available")
)

func (a *API) readBody(r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, errs.New(errs.Invalid, codeUnsupportedType, "send the request as application/json")
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, a.cfg.MaxBodyBytes+1))
	if err != nil {
		return nil, errs.Wrap(err, errs.Invalid, "body_unreadable", "the request body could not be read")
	}
	if int64(len(body)) > a.cfg.MaxBodyBytes {
		return nil, errs.New(errs.Invalid, codeBodyTooLarge, fmt.Sprintf("the request body is over %d bytes", a.cfg.MaxBodyBytes))
	}
	return body, nil
}

// decodeJSON decodes one object of known fields.
func decodeJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errs.Wrap(err, errs.Invalid, "bad_json", jsonProblem(err))
	}
	if dec.More() {
		return errs.New(errs.Invalid, "bad_json", "the body must be one JSON object")
	}
	return nil
}

// parseCreate is apart from HTTP, to be fuzzed.
func parseCreate(body []byte, cfg Config) (createRequest, error) {
	var req createRequest
	if err := decodeJSON(body, &req); err != nil {
		return req, err
	}
	req.Filename = strings.TrimSpace(req.Filename)
	req.Language, req.Priority = cmp.Or(req.Language, cfg.DefaultLanguage), cmp.Or(req.Priority, job.PriorityNormal)
	switch {
	case req.Filename == "" || len(req.Filename) > 255 || !utf8.ValidString(req.Filename):
		return req, errs.New(errs.Invalid, codeBadFilename, "filename must be 1 to 255 bytes of text")
	case strings.IndexFunc(req.Filename, job.UnsafeFilenameRune) >= 0:
		return req, errs.New(errs.Invalid, codeBadFilename, "filename must not contain control characters (line breaks, tabs, escapes) "+
			"or the invisible marks that reverse or isolate the direction of text (U+202A to U+202E, U+2066 to U+2069): "+
			"they make a name show as something it is not")
	case req.SizeBytes <= 0:
		return req, errs.New(errs.Invalid, "bad_size", "size_bytes must be the file's size, more than 0")
	case req.SizeBytes > s3.MaxPutSize:
		return req, errTooLarge
	case req.ContentType != "" && (len(req.ContentType) > 255 || strings.ContainsAny(req.ContentType, "\r\n") || !isMediaType(req.ContentType)):
		return req, errBadContentType
	case !cfg.ValidLanguage(req.Language):
		return req, errBadLanguage
	case !req.Priority.Valid():
		return req, errBadPriority
	case req.Summary && !cfg.Summaries:
		return req, errNoSummaries
	case req.CallbackURL != "":
		return req, callback.CheckURL(req.CallbackURL, cfg.CallbackAllowPrivate)
	}
	return req, nil
}

func isMediaType(ct string) bool { _, _, err := mime.ParseMediaType(ct); return err == nil }

// jsonProblem says what is wrong with a body in words, without echoing it.
func jsonProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr):
		return fmt.Sprintf("field %q has the wrong type", typeErr.Field)
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return "the body has a field the API does not know: " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	case errors.Is(err, io.EOF):
		return "the body is empty"
	}
	return "the body is not valid JSON"
}

func (a *API) createJob(w http.ResponseWriter, r *http.Request, caller apitoken.Token) (any, error) {
	body, err := a.readBody(r)
	if err != nil {
		return nil, err
	}
	req, err := parseCreate(body, a.cfg)
	if err != nil {
		return nil, err
	}
	if req.CallbackURL != "" && caller.CallbackSecret == "" {
		return nil, errNoCallbackSecret
	}
	if req.CallbackURL != "" && a.Callbacks == nil {
		return nil, errNoCallbacks
	}
	d := job.Draft{
		Source:         job.SourceAPI,
		OwnerID:        caller.ID,
		ChargedTo:      spend.API(caller.ID),
		Language:       req.Language,
		Priority:       req.Priority,
		Speakers:       req.Speakers,
		Summary:        req.Summary,
		NoReuse:        req.Reuse != nil && !*req.Reuse,
		Filename:       req.Filename,
		SizeBytes:      req.SizeBytes,
		ContentType:    req.ContentType,
		IdempotencyKey: r.Header.Get("Idempotency-Key"),
		UploadWindow:   a.cfg.UploadWindow(),
	}
	j, created, err := a.create(r.Context(), d)
	if err != nil {
		return nil, err
	}
	if !created && (j.Filename != d.Filename || j.SizeBytes != d.SizeBytes || j.ContentType != d.ContentType || j.Language != d.Language ||
		j.PriorityOf() != d.Priority || j.Features.Speakers != d.Speakers || j.Features.Summary != d.Summary ||
		j.Features.NoReuse != d.NoReuse) {
		return nil, errIdemReuse
	}
	fail := func(err error) (any, error) {
		if created {
			a.discard(r.Context(), j)
		}
		return nil, err
	}
	v := a.view(j)
	if req.CallbackURL != "" {
		cb, err := a.Callbacks.Register(r.Context(), j, caller, req.CallbackURL)
		if err == nil && cb.URL != req.CallbackURL {
			err = errIdemReuse
		}
		if err != nil {
			return fail(err)
		}
		v.Callback = callbackOf(cb)
	}
	if j.State == job.AwaitingUpload && !j.Deleted() {
		put, err := a.Objects.PresignPut(r.Context(), job.SourceKey(j.ID), j.SizeBytes, j.ContentType, a.cfg.UploadURLTTL)
		if err != nil {
			return fail(err)
		}
		v.Upload = ptr(uploadView(put))
	}
	status := http.StatusCreated
	if !created {
		status = http.StatusOK
	}
	w.Header().Set("Location", "/v1/jobs/"+j.ID)
	writeJSON(w, status, v)
	return nil, nil
}

// create makes d's job, or finds the one its idempotency key made, within
// the payer's limit of unfinished jobs (spend.Create): at the limit a
// retry still gets its job, which holds one of the places.
func (a *API) create(ctx context.Context, d job.Draft) (job.Job, bool, error) {
	var made func(job.Job) bool // a request without a key is not a retry of another
	if d.IdempotencyKey != "" {
		made = func(j job.Job) bool { return j.OwnerID == d.OwnerID && j.IdempotencyKey == d.IdempotencyKey }
	}
	return spend.Create(ctx, a.Counters, a.Jobs, a.cfg.Limits, d.ChargedTo, a.Clock.Now(), made, func() (job.Job, bool, error) {
		if d.IdempotencyKey != "" {
			return a.Jobs.CreateOnce(ctx, d)
		}
		j, err := a.Jobs.Create(ctx, d)
		return j, err == nil, err
	}, a.Log)
}

func (a *API) usage(w http.ResponseWriter, r *http.Request, caller apitoken.Token) (any, error) {
	u, err := spend.Report(r.Context(), a.Counters, a.Jobs, a.cfg.Limits, spend.API(caller.ID), a.Clock.Now())
	if err != nil {
		return nil, err
	}
	return u, nil
}

// discard deletes a job just made whose answer failed, so none waits for
// an upload nobody can make; failing that, the sweep ends it.
func (a *API) discard(ctx context.Context, j job.Job) {
	d, err := a.Jobs.Delete(ctx, j.ID)
	if err != nil {
		a.Log.WarnContext(ctx, "discard failed", "job_id", j.ID, "error", err.Error())
		return
	}
	spend.Deleted(ctx, a.Counters, a.cfg.Limits, j, d, a.Log)
}

// ownJob returns the caller's job named in the path; another's is not found.
func (a *API) ownJob(r *http.Request, caller apitoken.Token) (job.Job, error) {
	id, err := job.ParseID(r.PathValue("id")) // a malformed id never reaches the store
	if err != nil {
		return job.Job{}, err
	}
	j, err := a.Jobs.Get(r.Context(), id)
	if err != nil {
		return job.Job{}, err
	}
	if j.OwnerID != caller.ID || j.Source != job.SourceAPI {
		return job.Job{}, job.ErrNotFound
	}
	return j, nil
}

func (a *API) getJob(w http.ResponseWriter, r *http.Request, caller apitoken.Token) (any, error) {
	j, err := a.ownJob(r, caller)
	if err != nil {
		return nil, err
	}
	v := a.view(j)
	if a.Callbacks != nil {
		cb, err := a.Callbacks.Get(r.Context(), j.ID)
		switch {
		case err == nil:
			v.Callback = callbackOf(cb)
		case !errors.Is(err, outbox.ErrNotFound):
			return nil, err
		}
	}
	return v, nil
}

func (a *API) listJobs(w http.ResponseWriter, r *http.Request, caller apitoken.Token) (any, error) {
	q := r.URL.Query()
	limit := 20
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > job.MaxListLimit {
			return nil, errs.New(errs.Invalid, "bad_limit", fmt.Sprintf("limit must be 1 to %d", job.MaxListLimit))
		}
		limit = n
	}
	page, err := a.Jobs.List(r.Context(), caller.ID, q.Get("cursor"), limit)
	if err != nil {
		return nil, err
	}
	out := listView{Jobs: make([]jobView, 0, len(page.Jobs)), NextCursor: page.Next}
	for _, j := range page.Jobs {
		v := a.view(j)
		v.BilledSeconds, v.CostRub = nil, nil // the job's own view says them; a listing reads no segments to reckon them
		out.Jobs = append(out.Jobs, v)
	}
	return out, nil
}

func (a *API) transcript(w http.ResponseWriter, r *http.Request, caller apitoken.Token) (any, error) {
	f, ok := transcript.ParseFormat(r.URL.Query().Get("format"))
	if !ok {
		return nil, errs.New(errs.Invalid, "bad_format", "format must be txt, srt, vtt or json")
	}
	j, err := a.ownJob(r, caller)
	if err != nil {
		return nil, err
	}
	if err := notReady(j, "transcript", true); err != nil {
		return nil, err
	}
	t, err := a.readResult(r.Context(), j)
	if err != nil {
		return nil, err
	}
	name := j.ID + "." + string(f)
	if lang := r.URL.Query().Get("translate_to"); lang != "" {
		if t, err = a.Translations.Of(r.Context(), j, t, lang); err != nil {
			return nil, err
		}
		name = j.ID + "." + t.Language + "." + string(f)
	}
	var b bytes.Buffer
	if err := transcript.Render(&b, t, f); err != nil {
		return nil, err
	}
	w.Header().Set("Content-Type", f.ContentType())
	w.Header().Set("Content-Disposition", fmt.Sprintf("inline; filename=%q", name))
	_, _ = w.Write(b.Bytes())
	return nil, nil
}

// notReady says why done job j has no transcript or summary (what) to
// read yet; asked: the job asked for it.
func notReady(j job.Job, what string, asked bool) error {
	switch {
	case j.Deleted():
		return errs.New(errs.NotFound, codeGone, "the job was deleted")
	case j.State == job.Failed || j.State == job.Dead:
		return errs.New(errs.Conflict, "job_failed", "the job failed: "+j.ErrorMessage)
	case j.State != job.Done && asked:
		return errs.New(errs.Conflict, codeNotDone, "the "+what+" is not ready yet: the job is "+string(j.State))
	}
	return nil
}

func (a *API) readResult(ctx context.Context, j job.Job) (transcript.Transcript, error) {
	rc, err := a.Objects.Get(ctx, job.ResultKey(j.ID))
	if errs.Is(err, errs.NotFound) {
		return transcript.Transcript{}, errExpired
	}
	if err != nil {
		return transcript.Transcript{}, err
	}
	defer rc.Close()
	var t transcript.Transcript
	if err := json.NewDecoder(rc).Decode(&t); err != nil {
		return transcript.Transcript{}, fmt.Errorf("read transcript of job %s: %w", j.ID, err)
	}
	return t, nil
}

type summaryView struct {
	Text  string                  `json:"text"`
	Usage transcript.SummaryUsage `json:"usage"`
}

func (a *API) summary(w http.ResponseWriter, r *http.Request, caller apitoken.Token) (any, error) {
	format := r.URL.Query().Get("format")
	if format != "" && format != "txt" && format != "json" {
		return nil, errs.New(errs.Invalid, "bad_format", "format must be txt or json")
	}
	j, err := a.ownJob(r, caller)
	if err != nil {
		return nil, err
	}
	switch err := notReady(j, "summary", j.Features.Summary); {
	case err != nil:
		return nil, err
	case !j.Features.Summary:
		return nil, errs.New(errs.NotFound, codeNoSummary, `the job did not ask for a summary ("summary": true)`)
	case j.Features.SummaryMissing != "":
		return nil, errs.New(errs.NotFound, codeNoSummary, "the job has no summary: "+j.Features.SummaryMissing)
	}
	t, err := a.readResult(r.Context(), j)
	if err != nil {
		return nil, err
	}
	if t.Summary == nil {
		return nil, errs.New(errs.NotFound, codeNoSummary, "the job has no summary")
	}
	if format == "json" {
		return summaryView{Text: t.Summary.Text, Usage: t.Summary.Usage}, nil
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf("inline; filename=%q", j.ID+".summary.txt"))
	_, _ = io.WriteString(w, t.Summary.Text+"\n")
	return nil, nil
}

// deleteJob marks the job deleted and purges it; what remains, the
// bucket's lifecycle rules and SpeechKit's 3-day retention remove.
func (a *API) deleteJob(w http.ResponseWriter, r *http.Request, caller apitoken.Token) (any, error) {
	j, err := a.ownJob(r, caller)
	if err != nil {
		return nil, err
	}
	before := j
	if j, err = a.Jobs.Delete(r.Context(), j.ID); err != nil {
		return nil, err
	}
	log := a.Log.With("job_id", j.ID)
	spend.Deleted(r.Context(), a.Counters, a.cfg.Limits, before, j, log)
	job.Purge(r.Context(), a.Objects, a.Recognitions, a.Log, j)
	log.InfoContext(r.Context(), "job deleted")
	return a.view(j), nil
}
