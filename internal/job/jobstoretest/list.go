package jobstoretest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/ident"
	"transcriber/internal/job"
)

func testList(t *testing.T, open Opener) {
	t.Run("pages through one owner's jobs, newest first", func(t *testing.T) {
		e := newEnv(t, open)
		var mine []string
		for i := 0; i < 7; i++ {
			mine = append(mine, e.mustCreate(t, apiDraft("me")).ID)
			e.mustCreate(t, apiDraft("someone-else"))
		}
		_, _, err := e.st.CreateForMessage(e.ctx, messageDraft(1, 1))
		require.NoError(t, err)

		var got []string
		cursor := ""
		pages := 0
		for {
			page, err := e.st.List(e.ctx, "me", cursor, 3)
			require.NoError(t, err)
			require.LessOrEqual(t, len(page.Jobs), 3)
			for _, j := range page.Jobs {
				require.Equal(t, "me", j.OwnerID)
				got = append(got, j.ID)
			}
			pages++
			if page.Next == "" {
				break
			}
			cursor = page.Next
			require.Less(t, pages, 10, "the listing ends")
		}
		want := make([]string, len(mine))
		for i, id := range mine {
			want[len(mine)-1-i] = id
		}
		require.Equal(t, want, got)
		require.Equal(t, 3, pages, "7 jobs in pages of 3")
	})

	t.Run("a full last page has no next cursor", func(t *testing.T) {
		e := newEnv(t, open)
		for i := 0; i < 4; i++ {
			e.mustCreate(t, apiDraft("me"))
		}
		page, err := e.st.List(e.ctx, "me", "", 2)
		require.NoError(t, err)
		require.NotEmpty(t, page.Next)
		page, err = e.st.List(e.ctx, "me", page.Next, 2)
		require.NoError(t, err)
		require.Len(t, page.Jobs, 2)
		require.Empty(t, page.Next)
	})

	t.Run("a stranger sees nothing", func(t *testing.T) {
		e := newEnv(t, open)
		e.mustCreate(t, apiDraft("me"))
		page, err := e.st.List(e.ctx, "stranger", "", 10)
		require.NoError(t, err)
		require.Empty(t, page.Jobs)
		require.Empty(t, page.Next)
	})

	t.Run("the cursor is case-insensitive and need not name an existing job", func(t *testing.T) {
		e := newEnv(t, open)
		j := e.mustCreate(t, apiDraft("me"))
		page, err := e.st.List(e.ctx, "me", ident.New(), 10)
		require.NoError(t, err)
		require.Equal(t, []string{j.ID}, ids(page.Jobs))
		upper := []byte(ident.New())
		for i := range upper {
			if upper[i] >= 'a' && upper[i] <= 'z' {
				upper[i] -= 'a' - 'A'
			}
		}
		page, err = e.st.List(e.ctx, "me", string(upper), 10)
		require.NoError(t, err)
		require.Equal(t, []string{j.ID}, ids(page.Jobs))
	})

	t.Run("refuses a malformed cursor or limit", func(t *testing.T) {
		e := newEnv(t, open)
		_, err := e.st.List(e.ctx, "me", "not-a-cursor", 10)
		require.ErrorIs(t, err, job.ErrInvalid)
		for _, limit := range []int{0, -5, job.MaxListLimit + 1} {
			_, err := e.st.List(e.ctx, "me", "", limit)
			require.ErrorIs(t, err, job.ErrInvalid, "limit %d", limit)
		}
	})
}
