package httpapi

import (
	"cmp"
	"time"

	"transcriber/internal/callback"
	"transcriber/internal/job"
	"transcriber/internal/outbox"
	"transcriber/internal/spend"
	"transcriber/internal/transcript"
)

type jobView struct {
	ID          string          `json:"id"`
	State       job.State       `json:"state"`
	Progress    *int            `json:"progress,omitempty"` // none once failed or dead (progress)
	Filename    string          `json:"filename"`
	SizeBytes   int64           `json:"size_bytes"`
	ContentType string          `json:"content_type,omitempty"`
	Language    string          `json:"language"`
	Priority    job.Priority    `json:"priority"`
	DurationMs  int64           `json:"duration_ms,omitempty"`
	Recognition job.Recognition `json:"recognition,omitempty"`
	// BilledSeconds (spend.JobBilled) and CostRub show once done, in the
	// job's own view.
	BilledSeconds  *int64            `json:"billed_seconds,omitempty"`
	CostRub        *float64          `json:"cost_rub,omitempty"`
	CreatedAt      time.Time         `json:"created_at"`
	UpdatedAt      time.Time         `json:"updated_at"`
	DeletedAt      *time.Time        `json:"deleted_at,omitempty"`
	Error          *errorView        `json:"error,omitempty"`
	Transcript     map[string]string `json:"transcript,omitempty"`
	Options        *optionsView      `json:"options,omitempty"`
	ReusedFrom     string            `json:"reused_from,omitempty"` // the job whose transcript was reused
	Summary        map[string]string `json:"summary,omitempty"`
	SummaryMissing string            `json:"summary_missing,omitempty"`
	Upload         *uploadView       `json:"upload,omitempty"`
	// Callback shows in POST /v1/jobs and GET /v1/jobs/{id} only.
	Callback *callbackView `json:"callback,omitempty"`
}

type optionsView struct {
	Speakers bool  `json:"speakers,omitempty"`
	Summary  bool  `json:"summary,omitempty"`
	Reuse    *bool `json:"reuse,omitempty"` // false: made with "reuse": false
}

type callbackView struct {
	URL           string       `json:"url"`
	State         outbox.State `json:"state"`
	Attempts      int          `json:"attempts"`
	LastAttemptAt *time.Time   `json:"last_attempt_at,omitempty"`
	LastStatus    int          `json:"last_status,omitempty"`
	LastError     string       `json:"last_error,omitempty"`
	NextAttemptAt *time.Time   `json:"next_attempt_at,omitempty"`
}

func callbackOf(d callback.Delivery) *callbackView {
	v := &callbackView{URL: d.URL, State: d.State, Attempts: d.Attempts, LastStatus: d.LastStatus, LastError: d.LastError}
	if !d.LastAt.IsZero() {
		v.LastAttemptAt = ptr(d.LastAt)
	}
	if d.State == outbox.Pending && d.Attempts > 0 {
		v.NextAttemptAt = ptr(d.NextAt)
	}
	return v
}

// JobView is GET /v1/jobs/{id}'s view without the callback: a callback's payload.
func (a *API) JobView(j job.Job) any { return a.view(j) }

type errorView struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type uploadView struct {
	Method    string            `json:"method"`
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers"`
	ExpiresAt time.Time         `json:"expires_at"`
}

type listView struct {
	Jobs       []jobView `json:"jobs"`
	NextCursor string    `json:"next_cursor,omitempty"`
}

func (a *API) view(j job.Job) jobView {
	v := jobView{
		ID: j.ID, State: j.State, Progress: progress(j), Filename: j.Filename, SizeBytes: j.SizeBytes,
		ContentType: j.ContentType, Language: cmp.Or(j.Language, a.cfg.DefaultLanguage), Priority: j.PriorityOf(), Recognition: j.Recognition,
		DurationMs: j.DurationMs, CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt,
	}
	if j.Deleted() {
		v.DeletedAt = ptr(j.DeletedAt)
	}
	if (j.State == job.Failed || j.State == job.Dead) && j.ErrorCode != "" {
		v.Error = &errorView{Code: j.ErrorCode, Message: j.ErrorMessage}
	}
	if j.State == job.Done {
		v.BilledSeconds = ptr(spend.JobBilled(j))
		cost := j.ReservedMicros // settled to the cost once done
		if j.ReservedSeconds == 0 {
			cost = a.cfg.Limits.Cost(j, 0).Micros // kept no reservation: no counters
		}
		v.CostRub = ptr(spend.RublesFloat(cost))
	}
	if j.State == job.Done && !j.Deleted() {
		v.Transcript = make(map[string]string, len(transcript.Formats))
		for _, f := range transcript.Formats {
			v.Transcript[string(f)] = "/v1/jobs/" + j.ID + "/transcript?format=" + string(f)
		}
		switch {
		case j.Features.HasSummary():
			v.Summary = map[string]string{"txt": "/v1/jobs/" + j.ID + "/summary", "json": "/v1/jobs/" + j.ID + "/summary?format=json"}
		case j.Features.Summary:
			v.SummaryMissing = j.Features.SummaryMissing
		}
	}
	if f := j.Features; f.Speakers || f.Summary || f.NoReuse {
		v.Options = &optionsView{Speakers: f.Speakers, Summary: f.Summary}
		if f.NoReuse {
			v.Options.Reuse = ptr(false)
		}
	}
	v.ReusedFrom = j.Features.ReusedFrom
	return v
}

// progress is a rough percentage by stage and recognitions finished; nil
// for a failed or dead job, which keeps no record of how far it got.
func progress(j job.Job) *int {
	p, ok := map[job.State]int{job.AwaitingUpload: 0, job.Created: 10, job.Converted: 30, job.Transcribe: 40, job.Done: 100}[j.State]
	if !ok {
		return nil // failed, dead
	}
	if n := len(j.Segments); j.State == job.Transcribe && n > 0 {
		done := 0
		for _, sg := range j.Segments {
			if sg.Done {
				done++
			}
		}
		p += 55 * done / n
	}
	return &p
}

func ptr[T any](v T) *T { return &v }
