package telegram_test

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"transcriber/internal/telegram"
	"transcriber/internal/telegram/telegramtest"
	"transcriber/internal/telegram/tgconf"
)

// units is the length of s as Telegram counts it: UTF-16 code units.
func units(s string) int { return len(utf16.Encode([]rune(s))) }

// The Bot API counts a text's 4096 and a caption's 1024 in UTF-16 code
// units: an emoji such as 😀 is one character but two units. A transcript
// of 4096 units is one message, one of 4097 a document, whatever its
// characters; the fake Bot API refuses what Telegram would.
func TestTranscriptLengthsAreUTF16(t *testing.T) {
	const emoji = "😀" // U+1F600: 4 bytes, 1 rune, 2 UTF-16 units
	cases := []struct {
		name     string
		text     string
		document bool
	}{
		{"2048 emoji are exactly the limit", strings.Repeat(emoji, 2048), false},
		{"4096 units ending in an emoji", strings.Repeat("a", 4094) + emoji, false},
		{"4096 Cyrillic letters", strings.Repeat("ж", 4096), false},
		{"4097 units ending in an emoji", strings.Repeat("a", 4095) + emoji, true},
		{"2049 emoji: 2049 characters, 4098 units", strings.Repeat(emoji, 2049), true},
		{"4097 ASCII letters", strings.Repeat("a", 4097), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.tg.AddFile("f1", []byte("voice"))
			require.Equal(t, http.StatusOK, h.post(telegramtest.Voice(1, user, 10, "f1", 5, "en")))
			j := h.finish(h.jobsOf(user)[0], tc.text)
			require.NoError(t, h.bot.Finished(h.ctx, j))

			docs := h.tg.Calls("sendDocument")
			edits := h.tg.Calls("editMessageText")
			require.Len(t, edits, 1)
			if !tc.document {
				require.Empty(t, docs)
				require.Equal(t, tc.text, edits[0].Params["text"], "one message holds it all")
				return
			}
			require.Len(t, docs, 1)
			require.Contains(t, string(docs[0].File), tc.text)
			c := docs[0].Params["caption"]
			require.LessOrEqual(t, units(c), tgconf.MaxCaptionUTF16)
			require.True(t, utf8.ValidString(c))
			require.NotContains(t, c, "\uFFFD", "no character was cut")
			require.True(t, strings.HasSuffix(c, "…"))
			require.True(t, strings.HasPrefix(tc.text, strings.TrimSuffix(c, "…")), "the caption is the transcript's start")
		})
	}
}

// A caption is cut to at most 1024 units, at a character, for every
// length around the limit and every mix of one- and two-unit characters.
func TestCaptionCutsInUTF16Units(t *testing.T) {
	const emoji = "😀"
	for _, tc := range []struct {
		name string
		text string
		want int // the caption's length in units
	}{
		{"1024 units are left whole", strings.Repeat(emoji, 512), 1024},
		{"1024 units with a one-unit start", "a" + strings.Repeat(emoji, 511) + "a", 1024},
		// 1023 units of room before the ellipsis: 511 emoji (1022 units)
		// fit, the 512th would split.
		{"1025 units of emoji", "a" + strings.Repeat(emoji, 512), 1024},
		{"emoji only", strings.Repeat(emoji, 3000), 1023},
		{"letters only", strings.Repeat("a", 3000), 1024},
	} {
		got := telegram.Caption(tc.text)
		require.Equal(t, tc.want, units(got), tc.name)
		require.True(t, utf8.ValidString(got), tc.name)
		require.NotContains(t, got, "\uFFFD", tc.name)
	}
	// Cut at a word when one ends past half the room.
	words := strings.Repeat("😀😀 ", 400)
	got := telegram.Caption(words)
	require.LessOrEqual(t, units(got), 1024)
	require.True(t, strings.HasSuffix(got, "😀😀…"), "ends at a whole word: %q", got[len(got)-20:])
}

// A reply that quotes the user's text still fits one message, however long
// the text was.
func TestRepliesQuotingTheUserFitAMessage(t *testing.T) {
	h := newHarness(t)
	arg := strings.Repeat("😀", 2040) // with "/lang " 4086 units: a message Telegram takes
	require.Equal(t, http.StatusOK, h.post(telegramtest.Text(1, user, user, 5, "private", "/lang "+arg)))
	sent := h.tg.Calls("sendMessage")
	require.Len(t, sent, 1)
	require.LessOrEqual(t, units(sent[0].Params["text"]), tgconf.MaxMessageUTF16)
	require.Contains(t, sent[0].Params["text"], strings.Repeat("😀", 32)+"…")
}
