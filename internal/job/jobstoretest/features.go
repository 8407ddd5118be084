package jobstoretest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
)

// testFeatures: the options a job is made with (speakers, a summary) are
// kept from its draft through every way of making it; a save takes what
// the pipeline learned (channels, why a summary is missing) and never
// changes what was asked.
func testFeatures(t *testing.T, open Opener) {
	t.Run("the options are kept from the draft", func(t *testing.T) {
		e := newEnv(t, open)
		d := apiDraft("o")
		d.Speakers, d.Summary = true, true
		j := e.mustCreate(t, d)
		require.Equal(t, job.Features{Speakers: true, Summary: true}, j.Features)
		require.Equal(t, j, e.mustGet(t, j.ID))

		md := messageDraft(5, 6)
		md.Summary = true
		m, _, err := e.st.CreateForMessage(e.ctx, md)
		require.NoError(t, err)
		require.Equal(t, job.Features{Summary: true}, e.mustGet(t, m.ID).Features)

		kd := keyedDraft("o", "k")
		kd.Speakers = true
		k, _, err := e.st.CreateOnce(e.ctx, kd)
		require.NoError(t, err)
		require.Equal(t, job.Features{Speakers: true}, e.mustGet(t, k.ID).Features)

		n := e.mustCreate(t, apiDraft("o"))
		require.True(t, e.mustGet(t, n.ID).Features.Zero(), "no options, no features")
	})

	t.Run("a save takes what the pipeline learned, not the options", func(t *testing.T) {
		e := newEnv(t, open)
		d := apiDraft("o")
		d.Speakers, d.Summary = true, true
		j := e.mustCreate(t, d)
		c := e.mustClaim(t, j.ID, job.Ingest)
		c.State = job.Created
		c.Features = job.Features{Channels: 1, SummaryMissing: "no summary"}
		saved, err := e.st.Save(e.ctx, c, job.Next{Keep: true})
		require.NoError(t, err)
		want := job.Features{Speakers: true, Summary: true, Channels: 1, SummaryMissing: "no summary"}
		require.Equal(t, want, saved.Features, "a holder's copy does not drop the options")
		require.Equal(t, want, e.mustGet(t, j.ID).Features)
	})
}
