package ydb

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"transcriber/internal/botstate"
)

// fullChat has every field set; its times are whole milliseconds but not
// in UTC, as a caller may pass them.
func fullChat() botstate.Chat {
	return botstate.Chat{
		ID: -100123, Language: "ru-RU", Format: "srt", Auto: botstate.AutoOff, UILang: "en", Mode: "deferred", Features: "speakers summary",
		BlockedAt: at.Truncate(time.Millisecond), UpdatedAt: at.Add(time.Second).Truncate(time.Millisecond),
	}
}

func fullDelivery() botstate.Delivery {
	return botstate.Delivery{
		Key:   botstate.Key{ChatID: -100123, MessageID: 42, Part: "result"},
		JobID: "01jd0m3y8k9q2r5t7v4w6x8z0a", State: botstate.Sent, SentID: 9001, Attempts: 3,
		NextAt: at.Add(time.Minute).Truncate(time.Millisecond), LeaseUntil: at.Add(2 * time.Minute).Truncate(time.Millisecond),
		UpdatedAt: at.Add(time.Second).Truncate(time.Millisecond),
	}
}

// inUTC is what the store returns for a value it wrote: the same moments,
// in UTC.
func chatInUTC(c botstate.Chat) botstate.Chat {
	if !c.BlockedAt.IsZero() {
		c.BlockedAt = c.BlockedAt.UTC()
	}
	c.UpdatedAt = c.UpdatedAt.UTC()
	return c
}

func deliveryInUTC(d botstate.Delivery) botstate.Delivery {
	d.NextAt, d.LeaseUntil, d.UpdatedAt = d.NextAt.UTC(), d.LeaseUntil.UTC(), d.UpdatedAt.UTC()
	return d
}

// The Go lists of columns name the columns of the statements, in their
// order: the parameters of upsertChat are named after them, and the
// $deliveries struct has them as fields.
func TestBotStateColumnListsAgreeWithTheStatements(t *testing.T) {
	var chatNames, deliveryNames []string
	for _, c := range chatColumnList {
		chatNames = append(chatNames, c.name)
	}
	for _, c := range deliveryColumnList {
		deliveryNames = append(deliveryNames, c.name)
	}
	require.Equal(t, splitList(chatColumns), chatNames)
	require.Equal(t, splitList(deliveryColumns), deliveryNames)
	fields := structFields(normType(deliveriesStruct))
	require.Len(t, fields, len(deliveryNames))
	for _, name := range deliveryNames {
		require.Contains(t, fields, name)
	}
	var jobNames []string
	for _, c := range jobColumnList {
		jobNames = append(jobNames, c.name)
	}
	require.Equal(t, splitList(jobColumns), jobNames, "the jobs table's, too")
}

func TestChatParams(t *testing.T) {
	t.Run("every column, with its type", func(t *testing.T) {
		p := chatParams(fullChat())
		require.Len(t, p, len(chatColumnList))
		want := map[string]string{
			"$chat_id": "Int64", "$language": "Utf8", "$format": "Utf8", "$auto": "Utf8", "$ui_lang": "Utf8",
			"$blocked_at": "Optional<Timestamp>", "$updated_at": "Timestamp", "$mode": "Utf8", "$features": "Utf8",
		}
		for _, x := range p {
			require.Equal(t, want[x.name], x.value.Type().Yql(), x.name)
		}
	})
	t.Run("a chat not blocked has a NULL blocked_at", func(t *testing.T) {
		c := fullChat()
		c.BlockedAt = time.Time{}
		for _, x := range chatParams(c) {
			if x.name == "$blocked_at" {
				require.Contains(t, x.value.Yql(), "Nothing(Optional<")
			}
		}
	})
}

// A chat written as parameters and read back through the destinations that
// ScanNamed fills comes back equal, times in UTC; so does one never
// blocked.
func TestChatRowRoundTrip(t *testing.T) {
	notBlocked := fullChat()
	notBlocked.BlockedAt, notBlocked.Auto, notBlocked.Format = time.Time{}, botstate.AutoDefault, ""
	for name, c := range map[string]botstate.Chat{"every field set": fullChat(), "not blocked, defaults": notBlocked} {
		t.Run(name, func(t *testing.T) {
			byName := map[string]types.Value{}
			for _, x := range chatParams(c) {
				byName[x.name[1:]] = x.value
			}
			var r chatRow
			for _, d := range chatDests(&r) {
				v, ok := byName[d.Name()]
				require.True(t, ok, "column %s is written", d.Name())
				require.NoError(t, types.CastTo(v, d.Ref()), d.Name())
			}
			got := r.finish()
			require.Equal(t, chatInUTC(c), got)
			require.Equal(t, time.UTC, got.UpdatedAt.Location())
		})
	}
}

// deliveryFields is what a statement writes for d: the fields of the one
// element of its $deliveries parameter.
func deliveryFields(t *testing.T, d botstate.Delivery) map[string]types.Value {
	t.Helper()
	p := deliveriesParams(d)
	require.Len(t, p, 1)
	require.Equal(t, "$deliveries", p[0].name)
	items, err := types.ListItems(p[0].value)
	require.NoError(t, err)
	require.Len(t, items, 1)
	fields, err := types.StructFields(items[0])
	require.NoError(t, err)
	return fields
}

func TestDeliveryParams(t *testing.T) {
	fields := deliveryFields(t, fullDelivery())
	require.Len(t, fields, len(deliveryColumnList))
	want := map[string]string{
		"chat_id": "Int64", "message_id": "Int64", "part": "Utf8", "job_id": "Utf8", "state": "Utf8",
		"sent_id": "Int64", "attempts": "Int32", "next_at": "Timestamp", "lease_until": "Timestamp", "updated_at": "Timestamp",
	}
	for name, typ := range want {
		require.Equal(t, typ, fields[name].Type().Yql(), name)
	}
	var got time.Time
	require.NoError(t, types.CastTo(fields["next_at"], &got))
	require.Equal(t, fullDelivery().NextAt.UTC(), got.UTC())

	items, err := types.ListItems(deliveriesParams(fullDelivery(), fullDelivery())[0].value)
	require.NoError(t, err)
	require.Len(t, items, 2, "one element per delivery (ClaimDue writes several)")
}

func TestDeliveryRowRoundTrip(t *testing.T) {
	refusal := botstate.Delivery{
		Key: botstate.Key{ChatID: 7, MessageID: 1, Part: "refusal"}, State: botstate.Pending,
		NextAt: at.Truncate(time.Millisecond), LeaseUntil: at.Truncate(time.Millisecond), UpdatedAt: at.Truncate(time.Millisecond),
	}
	for name, d := range map[string]botstate.Delivery{"every field set": fullDelivery(), "scheduled, without a job": refusal} {
		t.Run(name, func(t *testing.T) {
			fields := deliveryFields(t, d)
			var r deliveryRow
			for _, dest := range deliveryDests(&r) {
				v, ok := fields[dest.Name()]
				require.True(t, ok, "column %s is written", dest.Name())
				require.NoError(t, types.CastTo(v, dest.Ref()), dest.Name())
			}
			got := r.finish()
			require.Equal(t, deliveryInUTC(d), got)
			require.Equal(t, time.UTC, got.NextAt.Location())
		})
	}
}

func TestDeliveryKeyAndDueParams(t *testing.T) {
	k := fullDelivery().Key
	p := deliveryKeyParams(k)
	require.Equal(t, []string{"$chat_id", "$message_id", "$part"}, []string{p[0].name, p[1].name, p[2].name})
	require.Equal(t, `"result"u`, p[2].value.Yql())

	due := dueDeliveriesParams(at, 7)
	require.Equal(t, `"pending"u`, due[0].value.Yql(), "ClaimDue selects pending deliveries")
	require.Equal(t, "7ul", due[2].value.Yql())
}
