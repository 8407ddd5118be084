package translate

import (
	"context"
	"math/rand"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
)

func bodiesOf(ps []piece) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.body)
	}
	return out
}

func joined(ps []piece) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.lead)
		b.WriteString(p.body)
		b.WriteString(p.sep)
	}
	return b.String()
}

func TestSplitTextPrefersTheBestBoundaryInTheSecondHalf(t *testing.T) {
	for name, tc := range map[string]struct {
		text  string
		limit int
		want  []string
	}{
		"fits":                                 {"One. Two.", 40, []string{"One. Two."}},
		"paragraph":                            {"First part is here and long.\n\nSecond. Third", 40, []string{"First part is here and long.", "Second. Third"}},
		"line over sentence":                   {"Alpha beta gamma. Delta\nepsilon zeta eta theta iota kappa", 30, []string{"Alpha beta gamma. Delta", "epsilon zeta eta theta iota", "kappa"}},
		"a closing quote":                      {`He said "stop." Then she went away from there`, 24, []string{`He said "stop."`, "Then she went away from", "there"}},
		"a paragraph too early is passed over": {"Hi.\n\nThis is a much longer sentence here. And more", 42, []string{"Hi.\n\nThis is a much longer sentence here.", "And more"}},
		"words":                                {"aaaa bbbb cccc dddd eeee", 12, []string{"aaaa bbbb", "cccc dddd", "eeee"}},
		"chinese full stops":                   {"我们今天去学校。明天在家里休息一下吧", 12, []string{"我们今天去学校。", "明天在家里休息一下吧"}},
		"leading whitespace":                   {"   \n  aaaa bbbb", 6, []string{"aaaa", "bbbb"}},
		"no boundary at all":                   {strings.Repeat("я", 25), 10, []string{strings.Repeat("я", 10), strings.Repeat("я", 10), strings.Repeat("я", 5)}},
	} {
		t.Run(name, func(t *testing.T) {
			got := splitText(tc.text, tc.limit)
			require.Equal(t, tc.want, bodiesOf(got))
			require.Equal(t, tc.text, joined(got))
		})
	}
}

// Whatever the text, the pieces are within the limit, never blank, whole
// characters, and join back into the text.
func TestSplitTextProperties(t *testing.T) {
	alphabet := []string{"a", "b", "я", "ж", " ", "\n", ".", "!", "😀", "\u0301", "。", "\"", "\t"}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 3000; i++ {
		var b strings.Builder
		for n := rng.Intn(200); n > 0; n-- {
			b.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		text := b.String()
		limit := 2 + rng.Intn(40)
		got := splitText(text, limit)
		require.Equal(t, text, joined(got), "text %q limit %d", text, limit)
		for j, p := range got {
			require.LessOrEqual(t, units(p.body), limit, "text %q limit %d", text, limit)
			require.True(t, utf8.ValidString(p.body))
			if len(got) > 1 {
				require.NotEmpty(t, strings.TrimSpace(p.body), "piece %d of %q, limit %d", j, text, limit)
				require.Empty(t, strings.TrimSpace(p.sep+p.lead), "only whitespace is left out")
			}
		}
	}
}

func TestMakePlanPacksInOrder(t *testing.T) {
	p := makePlan([]string{"aaaa", "", "bbbb", "cccc", "  ", "dd", strings.Repeat("e", 9)}, 8)

	var got [][]string
	for _, rq := range p.requests {
		got = append(got, p.bodies(rq))
	}
	require.Equal(t, [][]string{{"aaaa", "bbbb"}, {"cccc", "dd"}, {"eeeeeeee"}, {"e"}}, got)
}

func TestPacerWindows(t *testing.T) {
	clk := clocktest.NewFake(t0)
	var slept []time.Duration
	sleep := func(_ context.Context, d time.Duration) error {
		slept = append(slept, d)
		return nil // the clock stays: the reservations are what is tested
	}
	p := &pacer{q: Quota{RequestsPerSecond: 2, CharsPerHour: 100, MaxWait: 2 * time.Hour}, clock: clk, sleep: sleep}
	ctx := context.Background()

	require.NoError(t, p.Take(ctx, 10))
	require.NoError(t, p.Take(ctx, 10))
	require.NoError(t, p.Take(ctx, 10)) // the third in a second waits a second
	require.NoError(t, p.Take(ctx, 10))
	require.Equal(t, []time.Duration{time.Second, time.Second}, slept)

	clk.Advance(10 * time.Second)
	slept = nil
	require.NoError(t, p.Take(ctx, 60)) // 40 + 60 = 100: fits
	require.NoError(t, p.Take(ctx, 10)) // over 100: waits for the first 10 to leave the hour
	require.Equal(t, []time.Duration{time.Hour - 10*time.Second}, slept)

	err := (&pacer{q: Quota{CharsPerHour: 100}, clock: clk, sleep: sleep}).Take(ctx, 101)
	require.Equal(t, errs.Unavailable, errs.KindOf(err))
	require.Equal(t, CodeQuota, errs.CodeOf(err))
}

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func TestParseRetryAfter(t *testing.T) {
	now := t0
	for h, want := range map[string]time.Duration{
		"3":           3 * time.Second,
		" 0 ":         0,
		"99999999999": 24 * time.Hour,
		now.Add(90 * time.Second).Format(time.RFC1123): 90 * time.Second,
		now.Add(-time.Minute).Format(time.RFC1123):     0,
	} {
		got, ok := parseRetryAfter(strings.Replace(h, "UTC", "GMT", 1), now)
		require.True(t, ok, h)
		require.Equal(t, want, got, h)
	}
	for _, h := range []string{"", "-1", "soon", "1.5"} {
		_, ok := parseRetryAfter(h, now)
		require.False(t, ok, h)
	}
}

func TestCleanRemovesSecretsAndTexts(t *testing.T) {
	c := &Client{cfg: Config{Credentials: scrubber("SECRETKEY")}}
	texts := []string{"ok", "a private sentence that goes on for a while"}

	require.Equal(t, "bad key [redacted] for [text]", c.clean("bad key SECRETKEY for a private sentence that goes on for a while", texts))
	require.Equal(t, "ok is fine", c.clean("ok is fine", texts), "a short text is not scrubbed from the API's words")
	require.Equal(t, withheld, c.clean("failed on: a private sentence that", texts), "a quote of part of a text")
	require.Len(t, c.clean(strings.Repeat("x", 1000), nil), maxQuoted+len("…"))
}

type scrubber string

func (s scrubber) Authorization(context.Context) (string, string, error) {
	return "Api-Key " + string(s), "", nil
}
func (s scrubber) Scrub(text string) string { return strings.ReplaceAll(text, string(s), "[redacted]") }

// BenchmarkMakePlan plans an hour of speech (some 50,000 characters) as
// utterances, and as one text cut in pieces.
func BenchmarkMakePlan(b *testing.B) {
	var utts []string
	for i := 0; len(strings.Join(utts, " ")) < 50_000; i++ {
		utts = append(utts, "Это предложение номер "+strings.Repeat("и ", i%20)+"и оно кончается здесь.")
	}
	whole := strings.Join(utts, " ")
	b.Run("utterances", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			makePlan(utts, MaxRequestChars)
		}
	})
	b.Run("one text", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			makePlan([]string{whole}, MaxRequestChars)
		}
	})
}
