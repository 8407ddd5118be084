package ydb

import (
	"fmt"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"transcriber/internal/apitoken"
	"transcriber/internal/job"
)

// jobRow is a jobs row as read: the features apart, as their JSON text.
type jobRow struct {
	job.Job
	features string
}

// rowCol is one column of a row type T, read through R: its name, the
// value T gives it (the parameter of that name), and where R takes it.
type rowCol[T, R any] struct {
	name  string
	value func(*T) types.Value
	ref   func(*R) any
}

func structOf[T, R any](cols []rowCol[T, R], v *T) types.Value {
	fields := make([]types.StructValueOption, len(cols))
	for i, c := range cols {
		fields[i] = types.StructFieldValue(c.name, c.value(v))
	}
	return types.StructValue(fields...)
}

func destsOf[T, R any](cols []rowCol[T, R], r *R) []query.NamedDestination {
	d := make([]query.NamedDestination, len(cols))
	for i, c := range cols {
		d[i] = query.Named(c.name, c.ref(r))
	}
	return d
}

// jobColumnList names jobColumns and jobsStruct in order (statements_test.go).
var jobColumnList = []rowCol[job.Job, jobRow]{
	{"id", func(j *job.Job) types.Value { return utf8(j.ID) }, func(r *jobRow) any { return &r.ID }},
	{"state", func(j *job.Job) types.Value { return utf8(string(j.State)) }, func(r *jobRow) any { return &r.State }},
	{"source", func(j *job.Job) types.Value { return utf8(string(j.Source)) }, func(r *jobRow) any { return &r.Source }},
	{"owner_id", func(j *job.Job) types.Value { return utf8(j.OwnerID) }, func(r *jobRow) any { return &r.OwnerID }},
	{"language", func(j *job.Job) types.Value { return utf8(j.Language) }, func(r *jobRow) any { return &r.Language }},
	{"filename", func(j *job.Job) types.Value { return utf8(j.Filename) }, func(r *jobRow) any { return &r.Filename }},
	{"size_bytes", func(j *job.Job) types.Value { return i64(j.SizeBytes) }, func(r *jobRow) any { return &r.SizeBytes }},
	{"content_type", func(j *job.Job) types.Value { return utf8(j.ContentType) }, func(r *jobRow) any { return &r.ContentType }},
	{"duration_ms", func(j *job.Job) types.Value { return i64(j.DurationMs) }, func(r *jobRow) any { return &r.DurationMs }},
	{"tg_chat_id", func(j *job.Job) types.Value { return optI64(j.TelegramChatID) }, func(r *jobRow) any { return &r.TelegramChatID }},
	{"tg_message_id", func(j *job.Job) types.Value { return optI64(j.TelegramMessageID) }, func(r *jobRow) any { return &r.TelegramMessageID }},
	{"attempts", func(j *job.Job) types.Value { return types.Int32Value(int32(j.Attempts)) }, func(r *jobRow) any { return &r.Attempts }}, //nolint:gosec // attempts stay far below 2^31
	{"next_run_at", func(j *job.Job) types.Value { return ts(j.NextRunAt) }, func(r *jobRow) any { return &r.NextRunAt }},
	{"claim_id", func(j *job.Job) types.Value { return optUTF8(j.ClaimID) }, func(r *jobRow) any { return &r.ClaimID }},
	{"claim_until", func(j *job.Job) types.Value { return optTS(j.ClaimUntil) }, func(r *jobRow) any { return &r.ClaimUntil }},
	{"error_code", func(j *job.Job) types.Value { return utf8(j.ErrorCode) }, func(r *jobRow) any { return &r.ErrorCode }},
	{"error_message", func(j *job.Job) types.Value { return utf8(j.ErrorMessage) }, func(r *jobRow) any { return &r.ErrorMessage }},
	{"idempotency_key", func(j *job.Job) types.Value { return optUTF8(j.IdempotencyKey) }, func(r *jobRow) any { return &r.IdempotencyKey }},
	{"deleted_at", func(j *job.Job) types.Value { return optTS(j.DeletedAt) }, func(r *jobRow) any { return &r.DeletedAt }},
	{"upload_by", func(j *job.Job) types.Value { return optTS(j.UploadBy) }, func(r *jobRow) any { return &r.UploadBy }},
	{"ended_at", func(j *job.Job) types.Value { return optTS(j.EndedAt) }, func(r *jobRow) any { return &r.EndedAt }},
	{"created_at", func(j *job.Job) types.Value { return ts(j.CreatedAt) }, func(r *jobRow) any { return &r.CreatedAt }},
	{"updated_at", func(j *job.Job) types.Value { return ts(j.UpdatedAt) }, func(r *jobRow) any { return &r.UpdatedAt }},
	{"charged_to", func(j *job.Job) types.Value { return optUTF8(j.ChargedTo) }, func(r *jobRow) any { return &r.ChargedTo }},
	{"reserved_seconds", func(j *job.Job) types.Value { return optI64(j.ReservedSeconds) }, func(r *jobRow) any { return &r.ReservedSeconds }},
	{"reserved_day", func(j *job.Job) types.Value { return optTS(j.ReservedDay) }, func(r *jobRow) any { return &r.ReservedDay }},
	{"priority", func(j *job.Job) types.Value { return optUTF8(string(j.Priority)) }, func(r *jobRow) any { return &r.Priority }},
	{"features", func(j *job.Job) types.Value { return optUTF8(job.EncodeFeatures(j.Features)) }, func(r *jobRow) any { return &r.features }},
	{"recognition", func(j *job.Job) types.Value { return optUTF8(string(j.Recognition)) }, func(r *jobRow) any { return &r.Recognition }},
	{"billed_seconds", func(j *job.Job) types.Value { return optI64(j.BilledSeconds) }, func(r *jobRow) any { return &r.BilledSeconds }},
	{"reserved_micros", func(j *job.Job) types.Value { return optI64(j.ReservedMicros) }, func(r *jobRow) any { return &r.ReservedMicros }},
	{"reuse_key", func(j *job.Job) types.Value { return optUTF8(j.ReuseKey) }, func(r *jobRow) any { return &r.ReuseKey }},
}

// finish types the columns and puts times in UTC (the SDK hands
// Timestamps back in the local zone; the store writes milliseconds).
func (r *jobRow) finish() (job.Job, error) {
	j := r.Job
	f, err := job.DecodeFeatures(r.features)
	if err != nil {
		return job.Job{}, fmt.Errorf("job %s: %w", j.ID, err)
	}
	j.Features = f
	return job.Stored(j), nil
}

func scanJob(row query.Row) (job.Job, error) {
	var r jobRow
	if err := row.ScanNamed(destsOf(jobColumnList, &r)...); err != nil {
		return job.Job{}, fmt.Errorf("read job row: %w", err)
	}
	return r.finish()
}

type segmentRow struct {
	jobID string
	job.Segment
}

func segmentDests(r *segmentRow) []query.NamedDestination {
	return []query.NamedDestination{
		query.Named("job_id", &r.jobID), query.Named("seq", &r.Seq),
		query.Named("start_ms", &r.StartMs), query.Named("duration_ms", &r.DurationMs),
		query.Named("audio_key", &r.AudioKey), query.Named("container", &r.Container),
		query.Named("operation_id", &r.OperationID), query.Named("done", &r.Done),
	}
}

func tokenDests(t *apitoken.Token) []query.NamedDestination {
	return []query.NamedDestination{
		query.Named("hash", &t.Hash), query.Named("id", &t.ID), query.Named("name", &t.Name),
		query.Named("created_at", &t.CreatedAt), query.Named("revoked_at", &t.RevokedAt),
		query.Named("callback_secret", &t.CallbackSecret),
	}
}

// inUTC puts the times in UTC: the SDK hands Timestamps back in the local zone.
func inUTC(ts ...*time.Time) {
	for _, t := range ts {
		*t = t.UTC() // the zero time stays zero
	}
}

func scanToken(row query.Row) (t apitoken.Token, err error) {
	if err := row.ScanNamed(tokenDests(&t)...); err != nil {
		return apitoken.Token{}, fmt.Errorf("read token row: %w", err)
	}
	return tokenUTC(t), nil
}

// tokenUTC puts t's times in UTC (the SDK hands Timestamps back in the local zone).
func tokenUTC(t apitoken.Token) apitoken.Token {
	t.CreatedAt, t.RevokedAt = truncMs(t.CreatedAt), truncMs(t.RevokedAt)
	return t
}
