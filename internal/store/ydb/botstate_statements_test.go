package ydb

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	ydbtypes "github.com/ydb-platform/ydb-go-sdk/v3/table/types"
)

// Every table the statement files create is made by a schema step, the
// bot's among them.
func TestEveryTableIsASchemaStep(t *testing.T) {
	consts := statementConstants(t)
	var ddl []string
	for name, text := range consts {
		if strings.HasPrefix(name, "create") && name != "createSchemaSteps" {
			ddl = append(ddl, text)
		}
	}
	var stepDDL []string
	for _, st := range steps {
		stepDDL = append(stepDDL, st.ddl...)
	}
	require.ElementsMatch(t, ddl, stepDDL)
	require.Contains(t, steps[0].ddl, createTelegramChats)
	require.Equal(t, 1, SchemaVersion())

	schema, errs := parseSchema(ddlOf(consts))
	require.Empty(t, errs)
	chats := schema["telegram_chats"]
	require.Equal(t, column{typ: "Int64", notNull: true}, chats.columns["chat_id"])
	require.Len(t, chats.columns, 9)
	require.Equal(t, column{typ: "Utf8"}, chats.columns["mode"])
	require.Equal(t, column{typ: "Utf8"}, chats.columns["features"])
	require.Equal(t, column{typ: "Timestamp"}, chats.columns["blocked_at"])
}

// The agreement check catches drift in the bot's statements as it does in
// the jobs': a column renamed on one side only, a type changed, a parameter
// bound with another type than declared, or not bound at all, and a row's
// values written to the wrong columns.
func TestBotStateStatementsAgreementCatchesDrift(t *testing.T) {
	consts := statementConstants(t)
	ddl := ddlOf(consts)
	schema, _ := parseSchema(ddl)
	bound := boundParams()
	for _, name := range []string{"selectChat", "upsertChat", "deleteChat"} {
		require.Empty(t, checkStatement(schema, consts[name], bound[name]), "%s as written agrees", name)
	}

	t.Run("a statement names a column the schema lacks", func(t *testing.T) {
		for name, edit := range map[string][2]string{
			"upsertChat": {"ui_lang, blocked_at", "uilang, blocked_at"},
			"deleteChat": {"WHERE chat_id", "WHERE chat"},
		} {
			altered := strings.Replace(consts[name], edit[0], edit[1], 1)
			require.NotEqual(t, consts[name], altered, name)
			errs := checkStatement(schema, altered, bound[name])
			require.NotEmpty(t, errs, name)
		}
	})

	t.Run("the schema renames a column the statements use", func(t *testing.T) {
		renamed := slices.Clone(ddl)
		for i, d := range renamed {
			renamed[i] = strings.Replace(d, "ui_lang    Utf8", "ui_locale  Utf8", 1)
		}
		altered, _ := parseSchema(renamed)
		for _, stmt := range []string{"selectChat", "upsertChat"} {
			require.NotEmpty(t, checkStatement(altered, consts[stmt], bound[stmt]), stmt)
		}
	})

	t.Run("a column's type changes in the schema", func(t *testing.T) {
		retyped := slices.Clone(ddl)
		for i, d := range retyped {
			retyped[i] = strings.Replace(d, "blocked_at Timestamp", "blocked_at Datetime", 1)
		}
		altered, _ := parseSchema(retyped)
		require.NotEmpty(t, checkStatement(altered, consts["upsertChat"], bound["upsertChat"]))

		retyped = slices.Clone(ddl)
		for i, d := range retyped {
			retyped[i] = strings.Replace(d, "chat_id    Int64 NOT NULL", "chat_id    Uint64 NOT NULL", 1)
		}
		altered, _ = parseSchema(retyped)
		for _, stmt := range []string{"selectChat", "deleteChat"} {
			require.NotEmpty(t, checkStatement(altered, consts[stmt], bound[stmt]), stmt)
		}
	})

	t.Run("a key column may not be written from an optional", func(t *testing.T) {
		altered := strings.Replace(consts["upsertChat"], "DECLARE $chat_id AS Int64;", "DECLARE $chat_id AS Optional<Int64>;", 1)
		p := slices.Clone(bound["upsertChat"])
		p[0] = param{"$chat_id", ydbtypes.OptionalValue(ydbtypes.Int64Value(1))}
		require.NotEmpty(t, checkStatement(schema, altered, p))
	})

	t.Run("the Go code binds another type than declared", func(t *testing.T) {
		p := slices.Clone(bound["selectChat"])
		p[0] = param{"$chat_id", ydbtypes.Int32Value(1)}
		require.NotEmpty(t, checkStatement(schema, consts["selectChat"], p))

		p = slices.Clone(bound["upsertChat"])
		p[5] = param{"$blocked_at", ydbtypes.TimestampValueFromTime(t0())} // not optional
		require.NotEmpty(t, checkStatement(schema, consts["upsertChat"], p))

		s := entriesParams(fullEntry())[0].value
		items, err := ydbtypes.ListItems(s)
		require.NoError(t, err)
		fields, err := ydbtypes.StructFields(items[0])
		require.NoError(t, err)
		var opts []ydbtypes.StructValueOption
		for name, v := range fields {
			if name == "attempts" {
				v = ydbtypes.Int64Value(3)
			}
			opts = append(opts, ydbtypes.StructFieldValue(name, v))
		}
		p = params{{"$entries", ydbtypes.ListValue(ydbtypes.StructValue(opts...))}}
		require.NotEmpty(t, checkStatement(schema, consts["upsertEntries"], p), "a struct field of another type")
	})

	t.Run("a parameter is declared but never bound", func(t *testing.T) {
		require.NotEmpty(t, checkStatement(schema, consts["deleteChat"], nil))
		require.NotEmpty(t, checkStatement(schema, consts["upsertChat"], bound["upsertChat"][:6]))
	})

	t.Run("the Go code binds a parameter not declared", func(t *testing.T) {
		p := append(slices.Clone(bound["selectChat"]), param{"$part", utf8("x")})
		require.NotEmpty(t, checkStatement(schema, consts["selectChat"], p))
	})

	t.Run("values written to the wrong columns", func(t *testing.T) {
		altered := strings.Replace(consts["upsertChat"], "VALUES ($chat_id, $language, $format,", "VALUES ($chat_id, $format, $language,", 1)
		require.NotEqual(t, consts["upsertChat"], altered)
		errs := checkStatement(schema, altered, bound["upsertChat"])
		require.NotEmpty(t, errs, "two Utf8 columns swapped")
		require.Contains(t, fmt.Sprint(errs), "$format")
	})
}
