package httpapi

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	_ "embed" // the upload page
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"transcriber/internal/apitoken"
	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/storage/s3"
	"transcriber/internal/uploadlink"
)

// The one-time upload page, for a Telegram file over the bot's 20 MB: the
// link's token (package uploadlink) is the credential, and every reason a
// link does not open answers the same 404, so links cannot be probed. The
// script reads its routes from its own address, so the HTML carries no
// token, and no-referrer keeps the address from leaving.

//go:embed upload_page.html
var uploadPageSource string

var (
	uploadPage = template.Must(template.New("upload").Parse(uploadPageSource))
	// CSP hashes of the inline script and style, which never depend on the job
	pageScriptHash, pageStyleHash = pageHashes()
)

var (
	errLinkDeleted     = errs.New(errs.Conflict, "job_deleted", "the job was deleted; send the file to the bot again")
	errLinkExpired     = errs.New(errs.Conflict, "link_expired", "this upload link has expired; send the file to the bot again")
	errAlreadyUploaded = errs.New(errs.Conflict, "already_uploaded", "the file was already uploaded; this link now shows only the job's progress")
)

// uploadMissing is the pipeline's code for an upload window closed empty.
const uploadMissing = "upload_missing"

// linkedJob returns the Telegram job the link names, its token (query t)
// checked in constant time before the store is read.
func (a *API) linkedJob(r *http.Request) (job.Job, error) {
	if len(a.cfg.UploadLinkSecret) == 0 {
		return job.Job{}, errNoRoute
	}
	id := r.PathValue("id")
	if !uploadlink.Valid(a.cfg.UploadLinkSecret, id, r.URL.Query().Get("t")) {
		return job.Job{}, job.ErrNotFound
	}
	canon, err := job.ParseID(id)
	if err != nil {
		return job.Job{}, job.ErrNotFound
	}
	j, err := a.Jobs.Get(r.Context(), canon)
	switch {
	case errs.Is(err, errs.NotFound) || (err == nil && j.Source != job.SourceTelegram):
		return job.Job{}, job.ErrNotFound
	case err != nil:
		return job.Job{}, err
	}
	return j, nil
}

// uploadClosed tells why the job no longer takes its file; nil while it does.
func uploadClosed(j job.Job, now time.Time) error {
	switch {
	case j.Deleted():
		return errLinkDeleted
	case j.State == job.AwaitingUpload && !j.UploadBy.IsZero() && !now.Before(j.UploadBy):
		return errLinkExpired
	case j.State == job.AwaitingUpload:
		return nil
	case j.ErrorCode == uploadMissing:
		return errLinkExpired
	}
	return errAlreadyUploaded
}

type pageData struct {
	Filename  string
	SizeBytes int64
	SizeEN    string
	SizeRU    string
	State     job.State
	Closed    string // why the upload is closed, an error code; empty while open
	Error     string // the job's failure, in words
}

func (a *API) uploadPage(w http.ResponseWriter, r *http.Request, _ apitoken.Token) (any, error) {
	j, err := a.linkedJob(r)
	if err != nil {
		return nil, err
	}
	d := pageData{Filename: cmp.Or(j.Filename, "—"), SizeBytes: j.SizeBytes, State: j.State, Error: failure(j)}
	d.SizeEN, d.SizeRU = sizeText(j.SizeBytes)
	connect := "'self'"
	if closed := uploadClosed(j, a.Clock.Now()); closed != nil {
		d.Closed = errs.CodeOf(closed)
	} else {
		// the page PUTs to the presigned URL's origin
		origin, err := a.storageOrigin(r, j)
		if err != nil {
			return nil, err
		}
		connect += " " + origin
	}
	var b bytes.Buffer
	if err := uploadPage.Execute(&b, d); err != nil {
		return nil, fmt.Errorf("render the upload page: %w", err)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src '"+pageScriptHash+"'; style-src '"+pageStyleHash+
		"'; connect-src "+connect+"; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	_, _ = w.Write(b.Bytes())
	return nil, nil
}

func (a *API) storageOrigin(r *http.Request, j job.Job) (string, error) {
	put, err := a.Objects.PresignPut(r.Context(), job.SourceKey(j.ID), max(j.SizeBytes, 1), j.ContentType, a.cfg.UploadURLTTL)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(put.URL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("the upload URL has no origin")
	}
	return u.Scheme + "://" + u.Host, nil
}

type uploadLinkRequest struct {
	SizeBytes   int64  `json:"size_bytes"`
	ContentType string `json:"content_type,omitempty"`
}

func (a *API) signUpload(w http.ResponseWriter, r *http.Request, _ apitoken.Token) (any, error) {
	j, err := a.linkedJob(r)
	if err != nil {
		return nil, err
	}
	if err := uploadClosed(j, a.Clock.Now()); err != nil {
		return nil, err
	}
	// content_type, the browser's word, is checked but not signed: the job's own type is
	var req uploadLinkRequest
	body, err := a.readBody(r)
	if err == nil {
		err = decodeJSON(body, &req)
	}
	switch {
	case err != nil:
		return nil, err
	case req.SizeBytes <= 0:
		return nil, errs.New(errs.Invalid, "bad_size", "size_bytes must be the file's size, more than 0")
	case req.ContentType != "" && (!isMediaType(req.ContentType) || len(req.ContentType) > 255):
		return nil, errBadContentType
	}
	size := j.SizeBytes
	switch {
	case size > 0 && req.SizeBytes != size:
		return nil, errs.New(errs.Invalid, "size_mismatch", fmt.Sprintf(
			"the file picked is %d bytes, but the file sent to the bot is %d bytes: pick that same file", req.SizeBytes, size))
	case size == 0 && req.SizeBytes > s3.MaxPutSize:
		return nil, errTooLarge
	case size == 0:
		size = req.SizeBytes // Telegram did not say; the signature holds the file to what the page read
	}
	put, err := a.Objects.PresignPut(r.Context(), job.SourceKey(j.ID), size, j.ContentType, a.cfg.UploadURLTTL)
	if err != nil {
		return nil, err
	}
	a.Log.InfoContext(r.Context(), "upload link signed", "job_id", j.ID)
	return map[string]uploadView{"upload": uploadView(put)}, nil
}

// linkStatusView names nothing but this job's progress.
type linkStatusView struct {
	State        job.State `json:"state"`
	Progress     *int      `json:"progress,omitempty"` // none once failed or dead
	ErrorMessage string    `json:"error_message,omitempty"`
}

func (a *API) uploadStatus(w http.ResponseWriter, r *http.Request, _ apitoken.Token) (any, error) {
	j, err := a.linkedJob(r)
	if err != nil {
		return nil, err
	}
	return linkStatusView{State: j.State, Progress: progress(j), ErrorMessage: failure(j)}, nil
}

func failure(j job.Job) string {
	if j.State != job.Failed && j.State != job.Dead {
		return ""
	}
	return cmp.Or(j.ErrorMessage, "the transcription failed")
}

func sizeText(n int64) (en, ru string) {
	if n <= 0 {
		return "unknown", "неизвестен"
	}
	mb := fmt.Sprintf("%.1f", float64(n)/(1<<20))
	return fmt.Sprintf("%s MB (%d bytes)", mb, n), fmt.Sprintf("%s МБ (%d байт)", strings.Replace(mb, ".", ",", 1), n)
}

func pageHashes() (script, style string) {
	var b bytes.Buffer
	if err := uploadPage.Execute(&b, pageData{}); err != nil {
		panic(fmt.Sprintf("upload page: %v", err))
	}
	hash := func(tag string) string {
		_, rest, opened := strings.Cut(b.String(), "<"+tag+">")
		text, _, closed := strings.Cut(rest, "</"+tag+">")
		if !opened || !closed {
			panic("upload page: no <" + tag + "> element")
		}
		sum := sha256.Sum256([]byte(text))
		return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
	}
	return hash("script"), hash("style")
}
