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

// inUTC is what the store returns for a value it wrote: the same moments,
// in UTC.
func chatInUTC(c botstate.Chat) botstate.Chat {
	if !c.BlockedAt.IsZero() {
		c.BlockedAt = c.BlockedAt.UTC()
	}
	c.UpdatedAt = c.UpdatedAt.UTC()
	return c
}

// The Go lists of columns name the columns of the statements, in their
// order: the parameters of upsertChat are named after them, and the
// $entries struct has them as fields.
func TestColumnListsAgreeWithTheStatements(t *testing.T) {
	var chatNames, entryNames []string
	for _, c := range chatColumnList {
		chatNames = append(chatNames, c.name)
	}
	for _, c := range outboxColumnList {
		entryNames = append(entryNames, c.name)
	}
	require.Equal(t, splitList(chatColumns), chatNames)
	require.Equal(t, splitList(outboxColumns), entryNames)
	fields := structFields(normType(outboxStruct))
	require.Len(t, fields, len(entryNames))
	for _, name := range entryNames {
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
			for _, d := range destsOf(chatColumnList, &r) {
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
