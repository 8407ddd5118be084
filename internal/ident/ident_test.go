package ident_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/ident"
)

func TestNewIsLowercaseAndParses(t *testing.T) {
	id := ident.New()
	require.Len(t, id, ident.Len)
	require.Equal(t, strings.ToLower(id), id)
	got, err := ident.Parse(id)
	require.NoError(t, err)
	require.Equal(t, id, got)
}

func TestNewIsMonotonicWithinAMillisecond(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	prev := ident.NewAt(at)
	for i := 0; i < 10000; i++ {
		next := ident.NewAt(at)
		require.Greater(t, next, prev, "id %d of the same millisecond", i)
		prev = next
	}
	ts, err := ident.Time(prev)
	require.NoError(t, err)
	require.True(t, ts.Equal(at), "got %s, want %s", ts, at)
}

func TestNewFollowsTime(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	later := ident.NewAt(at.Add(time.Millisecond))
	earlier := ident.NewAt(at)
	require.Less(t, earlier, later, "an id of an earlier millisecond sorts first")
}

func TestNewIsUniqueUnderConcurrency(t *testing.T) {
	const goroutines, each = 16, 500
	var mu sync.Mutex
	seen := make(map[string]bool, goroutines*each)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]string, each)
			for i := range ids {
				ids[i] = ident.New()
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range ids {
				seen[id] = true
			}
		}()
	}
	wg.Wait()
	require.Len(t, seen, goroutines*each)
}

func TestParse(t *testing.T) {
	valid := "01jd0m3y8k9q2r5t7v4w6x8z0a"
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		{name: "lower case passes", in: valid, want: valid},
		{name: "upper case is normalised", in: strings.ToUpper(valid), want: valid},
		{name: "mixed case is normalised", in: "01JD0m3y8K9q2r5t7v4w6x8z0A", want: valid},
		{name: "empty", in: "", wantErr: true},
		{name: "too short", in: valid[:25], wantErr: true},
		{name: "too long", in: valid + "0", wantErr: true},
		{name: "letter outside Crockford base32", in: "01jd0m3y8k9q2r5t7v4w6x8z0u", wantErr: true},
		{name: "time overflows 48 bits", in: "81jd0m3y8k9q2r5t7v4w6x8z0a", wantErr: true},
		{name: "path traversal", in: "../../../../etc/passwd/xxx", wantErr: true},
		{name: "uuid", in: "123e4567-e89b-12d3-a456-4266", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ident.Parse(tc.in)
			if tc.wantErr {
				require.ErrorIs(t, err, ident.ErrMalformed)
				require.Empty(t, got)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add("01jd0m3y8k9q2r5t7v4w6x8z0a")
	f.Add("01JD0M3Y8K9Q2R5T7V4W6X8Z0A")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ident.Parse(s)
		if err != nil {
			return
		}
		again, err := ident.Parse(got)
		require.NoError(t, err, "a parsed id parses again")
		require.Equal(t, got, again)
		require.Equal(t, strings.ToLower(got), got)
		require.True(t, strings.EqualFold(s, got))
	})
}
