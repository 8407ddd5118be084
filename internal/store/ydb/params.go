package ydb

import (
	"fmt"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/table"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"transcriber/internal/apitoken"
	"transcriber/internal/errs"
	"transcriber/internal/job"
)

// params are a statement's parameters in the order they are declared.
type params []param

type param struct {
	name  string // with its $
	value types.Value
}

// build refuses a bad time (checkTimes) before any statement runs.
func (p params) build() (*table.QueryParameters, error) {
	opts := make([]table.ParameterOption, len(p))
	for i, x := range p {
		if err := checkTimes(x.name, x.value); err != nil {
			return nil, err
		}
		opts[i] = table.ValueParam(x.name, x.value)
	}
	return table.NewQueryParameters(opts...), nil
}

// errBadTime: a time a Timestamp cannot hold, usually the zero time.Time
// of a required time never set, which the SDK wraps to far past YDB's
// range (an Optional column binds NULL for it: optTS).
var errBadTime = errs.New(errs.Internal, "store_bad_time", "the job store was given a time it cannot keep")

// maxTimestamp in microseconds: "Timestamp … from 00:00 01.01.1970 to
// 00:00 01.01.2106" (https://ydb.tech/docs/en/yql/reference/types/primitive).
const maxTimestamp = uint64(4291747200) * 1_000_000

var zeroTimestamp = timestampMicros(types.TimestampValueFromTime(time.Time{}))

func timestampMicros(v types.Value) uint64 {
	var us uint64
	_ = types.CastTo(v, &us) // a Timestamp casts to its microseconds
	return us
}

// checkTimes refuses a Timestamp outside YDB's range anywhere in v
// (Optional, List items, Struct fields); where names it.
func checkTimes(where string, v types.Value) error {
	if types.IsNull(v) {
		return nil
	}
	v = types.Unwrap(v)
	if types.Equal(v.Type(), types.TypeTimestamp) {
		switch us := timestampMicros(v); {
		case us == zeroTimestamp:
			return fmt.Errorf("%w: %s is the zero time, which a Timestamp cannot hold", errBadTime, where)
		case us >= maxTimestamp:
			return fmt.Errorf("%w: %s is outside the range of a Timestamp (1970 to 2105)", errBadTime, where)
		}
		return nil
	}
	if items, err := types.ListItems(v); err == nil {
		for i, item := range items {
			if err := checkTimes(fmt.Sprintf("%s[%d]", where, i), item); err != nil {
				return err
			}
		}
		return nil
	}
	if fields, err := types.StructFields(v); err == nil {
		for name, f := range fields {
			if err := checkTimes(where+"."+name, f); err != nil {
				return err
			}
		}
	}
	return nil
}

func utf8(s string) types.Value     { return types.UTF8Value(s) }
func ts(t time.Time) types.Value    { return types.TimestampValueFromTime(t.UTC()) }
func i64(v int64) types.Value       { return types.Int64Value(v) }
func uint64Param(n int) types.Value { return types.Uint64Value(uint64(n)) } //nolint:gosec // n is a checked limit, at most status.MaxRead
func list(vs []types.Value) types.Value {
	if len(vs) == 0 {
		return types.ZeroValue(types.List(types.TypeUTF8))
	}
	return types.ListValue(vs...)
}

// Optional values: a zero Go value is NULL.
func optUTF8(s string) types.Value {
	if s == "" {
		return types.NullValue(types.TypeUTF8)
	}
	return types.OptionalValue(types.UTF8Value(s))
}

func optI64(v int64) types.Value {
	if v == 0 {
		return types.NullValue(types.TypeInt64)
	}
	return types.OptionalValue(types.Int64Value(v))
}

func optTS(t time.Time) types.Value {
	if t.IsZero() {
		return types.NullValue(types.TypeTimestamp)
	}
	return types.OptionalValue(ts(t))
}

func jobsParams(jobs ...job.Job) params {
	vs := make([]types.Value, len(jobs))
	for i, j := range jobs {
		j = job.Stored(j)
		vs[i] = structOf(jobColumnList, &j)
	}
	return params{{"$jobs", types.ListValue(vs...)}}
}

// segmentsParams: segments carry their job's end, to expire with it.
func segmentsParams(jobID string, segs []job.Segment, endedAt time.Time) params {
	vs := make([]types.Value, len(segs))
	for i, s := range segs {
		vs[i] = types.StructValue(
			types.StructFieldValue("job_id", utf8(jobID)),
			types.StructFieldValue("seq", types.Int32Value(int32(s.Seq))), //nolint:gosec // a few segments per job
			types.StructFieldValue("start_ms", i64(s.StartMs)),
			types.StructFieldValue("duration_ms", i64(s.DurationMs)),
			types.StructFieldValue("audio_key", utf8(s.AudioKey)),
			types.StructFieldValue("container", utf8(s.Container)),
			types.StructFieldValue("operation_id", utf8(s.OperationID)),
			types.StructFieldValue("done", types.BoolValue(s.Done)),
			types.StructFieldValue("ended_at", optTS(job.Ms(endedAt))),
		)
	}
	return params{{"$segments", types.ListValue(vs...)}}
}

func tokenParams(t apitoken.Token) params {
	return params{{"$hash", utf8(t.Hash)}, {"$id", utf8(t.ID)}, {"$name", utf8(t.Name)}, {"$created_at", ts(truncMs(t.CreatedAt))},
		{"$revoked_at", optTS(truncMs(t.RevokedAt))}, {"$callback_secret", utf8(t.CallbackSecret)}}
}

// truncMs is job.Ms, for the non-job rows.
var truncMs = job.Ms

// One function a statement, so the agreement test checks what is bound.

func jobIDParams(id string) params          { return params{{"$id", utf8(id)}} }        // selectJob
func jobIDsParams(ids []types.Value) params { return params{{"$job_ids", list(ids)}} }  // selectSegments
func segmentsOfParams(jobID string) params  { return params{{"$job_id", utf8(jobID)}} } // deleteSegments

func dueParams(state types.Value, now time.Time, n int) params { // selectDueJobs
	return params{{"$state", state}, {"$now", ts(now)}, {"$limit", uint64Param(n)}}
}

func nextDueParams(state types.Value) params { return params{{"$state", state}} } // selectNextDue

func listParams(ownerID, cursor string, n int) params { // listJobs, listJobsAfter
	if cursor == "" {
		return params{{"$owner_id", utf8(ownerID)}, {"$limit", uint64Param(n)}}
	}
	return params{{"$owner_id", utf8(ownerID)}, {"$id", utf8(cursor)}, {"$limit", uint64Param(n)}}
}

func unfinishedParams(chargedTo string, n int) params { // selectUnfinished
	return params{{"$charged_to", utf8(chargedTo)}, {"$limit", uint64Param(n)}}
}

func reusableParams(key string, endedAfter time.Time) params { // selectReusable
	return params{{"$reuse_key", utf8(key)}, {"$ended_after", ts(job.Ms(endedAfter))}, {"$done", utf8(string(job.Done))}}
}

func messageParams(chatID, messageID int64) params { // selectMessageJob
	return params{{"$chat_id", i64(chatID)}, {"$message_id", i64(messageID)}}
}

func keyParams(ownerID, key string) params { // selectKeyJob
	return params{{"$owner_id", utf8(ownerID)}, {"$idempotency_key", utf8(key)}}
}

func withJobID(key params, jobID string) params {
	return append(key[:len(key):len(key)], param{"$job_id", utf8(jobID)})
}

func keyRowParams(key params, jobID string, createdAt time.Time) params {
	return append(withJobID(key, jobID), param{"$created_at", ts(job.Ms(createdAt))})
}

func tokenHashParams(hash string) params { return params{{"$hash", utf8(hash)}} } // selectTokenByHash
func tokenIDParams(id string) params     { return params{{"$id", utf8(id)}} }     // selectTokenByID

func revokeParams(hash string, at time.Time) params { // revokeToken
	return params{{"$hash", utf8(hash)}, {"$revoked_at", ts(at)}}
}

func stepParams(n int, name string, now time.Time) params { // insertSchemaStep, upsertSchemaTTL
	return params{{"$step", types.Int32Value(int32(n))}, {"$name", utf8(name)}, {"$applied_at", ts(now)}} //nolint:gosec // a handful of steps
}
