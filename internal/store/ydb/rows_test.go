package ydb

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"transcriber/internal/apitoken"
	"transcriber/internal/job"
)

// at has a sub-millisecond part and is not in UTC: what the store writes
// and returns must be UTC at milliseconds.
var at = time.Date(2026, 3, 1, 13, 0, 0, 123_456_789, time.FixedZone("MSK", 3*3600))

func fullJob() job.Job {
	return job.Job{
		ID: "01jd0m3y8k9q2r5t7v4w6x8z0a", State: job.Transcribe, Source: job.SourceTelegram,
		OwnerID: "01jd0m3y8k9q2r5t7v4w6x8z0b", Language: "ru-RU", Filename: "voice.ogg",
		SizeBytes: 40_000, ContentType: "audio/ogg", DurationMs: 61_500,
		TelegramChatID: -100123, TelegramMessageID: 42, Attempts: 2,
		NextRunAt: at.Add(time.Minute), ClaimID: "01jd0m3y8k9q2r5t7v4w6x8z0c", ClaimUntil: at.Add(time.Minute),
		ErrorCode: "speechkit_unavailable", ErrorMessage: "recognition is unavailable",
		IdempotencyKey: "key-1", DeletedAt: at.Add(2 * time.Minute), UploadBy: at.Add(time.Hour),
		EndedAt: at.Add(3 * time.Minute), CreatedAt: at, UpdatedAt: at.Add(time.Second),
		ChargedTo: "tgu:77", ReservedSeconds: 62, ReservedDay: at.Add(-13 * time.Hour), Priority: job.PriorityDeferred,
		Features:    job.Features{Speakers: true, Summary: true, Channels: 2, SummaryMissing: "no summary"},
		Recognition: job.RecognitionSync, BilledSeconds: 15,
	}
}

// row is what a statement writes for j: the fields of the one element of
// its $jobs parameter.
func row(t *testing.T, j job.Job) map[string]types.Value {
	t.Helper()
	p := jobsParams(j)
	require.Len(t, p, 1)
	require.Equal(t, "$jobs", p[0].name)
	items, err := types.ListItems(p[0].value)
	require.NoError(t, err)
	require.Len(t, items, 1)
	fields, err := types.StructFields(items[0])
	require.NoError(t, err)
	return fields
}

func TestJobParams(t *testing.T) {
	t.Run("every column, with its type", func(t *testing.T) {
		fields := row(t, fullJob())
		require.Len(t, fields, len(jobColumnList))
		want := map[string]string{
			"id": "Utf8", "state": "Utf8", "size_bytes": "Int64", "attempts": "Int32",
			"tg_chat_id": "Optional<Int64>", "next_run_at": "Timestamp", "claim_id": "Optional<Utf8>",
			"claim_until": "Optional<Timestamp>", "deleted_at": "Optional<Timestamp>", "created_at": "Timestamp",
			"recognition": "Optional<Utf8>", "billed_seconds": "Optional<Int64>",
		}
		for name, typ := range want {
			require.Equal(t, typ, fields[name].Type().Yql(), name)
		}
	})
	t.Run("empty optional fields are NULL", func(t *testing.T) {
		j := fullJob()
		j.TelegramChatID, j.TelegramMessageID, j.ClaimID, j.ClaimUntil = 0, 0, "", time.Time{}
		j.IdempotencyKey, j.DeletedAt, j.UploadBy = "", time.Time{}, time.Time{}
		j.ChargedTo, j.ReservedSeconds, j.ReservedDay, j.Priority, j.Features = "", 0, time.Time{}, "", job.Features{}
		j.Recognition, j.BilledSeconds = "", 0
		fields := row(t, j)
		for _, name := range []string{"tg_chat_id", "tg_message_id", "claim_id", "claim_until", "idempotency_key", "deleted_at", "upload_by",
			"charged_to", "reserved_seconds", "reserved_day", "priority", "features", "recognition", "billed_seconds"} {
			require.Contains(t, fields[name].Yql(), "Nothing(Optional<", name)
		}
		require.Equal(t, `"speechkit_unavailable"u`, fields["error_code"].Yql())
	})
	t.Run("times are UTC at milliseconds", func(t *testing.T) {
		var got time.Time
		require.NoError(t, types.CastTo(row(t, fullJob())["created_at"], &got))
		require.Equal(t, at.UTC().Truncate(time.Millisecond), got.UTC())
	})
}

// A job written as parameters and read back through the destinations that
// ScanNamed fills comes back equal, times at milliseconds in UTC.
func TestJobRowRoundTrip(t *testing.T) {
	for name, j := range map[string]job.Job{
		"every field set": fullJob(),
		"a fresh API job": {ID: "01jd0m3y8k9q2r5t7v4w6x8z0d", State: job.AwaitingUpload, Source: job.SourceAPI,
			NextRunAt: at, UploadBy: at, CreatedAt: at, UpdatedAt: at},
	} {
		t.Run(name, func(t *testing.T) {
			fields := row(t, j)
			var r jobRow
			for _, d := range destsOf(jobColumnList, &r) {
				v, ok := fields[d.Name()]
				require.True(t, ok, "column %s is written", d.Name())
				require.NoError(t, types.CastTo(v, d.Ref()), d.Name())
			}
			got, err := r.finish()
			require.NoError(t, err)
			require.Equal(t, job.Stored(j), got)
			require.Equal(t, time.UTC, got.CreatedAt.Location())
		})
	}
}

func TestSegmentParams(t *testing.T) {
	segs := []job.Segment{
		{Seq: 0, StartMs: 0, DurationMs: 1000, AudioKey: job.AudioKey("j", 0), Container: "OGG_OPUS", OperationID: "op1", Done: true},
		{Seq: 1, StartMs: 1000, DurationMs: 500, AudioKey: job.AudioKey("j", 1), Container: "OGG_OPUS"},
	}
	p := segmentsParams("01jd0m3y8k9q2r5t7v4w6x8z0a", segs, at.Add(time.Hour))
	items, err := types.ListItems(p[0].value)
	require.NoError(t, err)
	require.Len(t, items, 2)
	for i, item := range items {
		fields, err := types.StructFields(item)
		require.NoError(t, err)
		var ended *time.Time
		require.NoError(t, types.CastTo(fields["ended_at"], &ended))
		require.NotNil(t, ended)
		require.True(t, at.Add(time.Hour).Truncate(time.Millisecond).Equal(*ended), "a segment carries its job's end, to expire with it: %v", *ended)
		var r segmentRow
		for _, d := range segmentDests(&r) {
			require.NoError(t, types.CastTo(fields[d.Name()], d.Ref()), d.Name())
		}
		require.Equal(t, "01jd0m3y8k9q2r5t7v4w6x8z0a", r.jobID)
		require.Equal(t, segs[i], r.Segment)
	}
}

func TestTokenRowRoundTrip(t *testing.T) {
	tok, _, err := apitoken.New("ci", at)
	require.NoError(t, err)
	tok.RevokedAt = at.Add(time.Hour)
	var r apitoken.Token
	byName := map[string]types.Value{}
	for _, p := range tokenParams(tok) {
		byName[p.name[1:]] = p.value
	}
	for _, d := range tokenDests(&r) {
		require.NoError(t, types.CastTo(byName[d.Name()], d.Ref()), d.Name())
	}
	want := tok
	want.CreatedAt, want.RevokedAt = tok.CreatedAt.UTC(), tok.RevokedAt.UTC().Truncate(time.Millisecond)
	require.Equal(t, want, tokenUTC(r))
}
