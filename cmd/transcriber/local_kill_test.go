package main

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"

	"transcriber/internal/speechkit/speechkittest"
)

// `transcriber local` killed with SIGKILL while its jobs are in
// transcribe, held by the steps that were checking them: the next start
// takes the claims back, says how many, and finishes the jobs at once —
// well inside the claims' 2-minute lease, which they would otherwise
// wait out.
func TestLocalStackKilledResumesItsJobsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real process")
	}
	note := voiceNote(t)
	sk := speechkittest.Start(t)
	sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
		plan := speechkittest.DefaultPlan()
		plan.PendingChecks = 1 << 30 // checked for the ingest's 15 s, and on
		return plan
	})
	bin := buildBinary(t)
	env := []string{
		"DATA_DIR=" + t.TempDir(), "HTTP_ADDR=127.0.0.1:0", "LOCAL_S3_ADDR=127.0.0.1:0", "POLL_INTERVAL=200ms",
		"SHUTDOWN_TIMEOUT=1s", "SPEECHKIT_ENDPOINT=" + sk.Addr(), "SPEECHKIT_OPERATION_ENDPOINT=" + sk.Addr(),
		"SPEECHKIT_INSECURE=true", "SPEECHKIT_API_KEY=" + speechkittest.TestKey, "LOG_LEVEL=debug",
	}
	p := startLocal(t, bin, env)
	token := p.token
	var ids []string
	for range 2 {
		ids = append(ids, p.submit(token, note).ID)
	}
	for _, id := range ids {
		p.waitState(token, id, "transcribe")
	}
	require.NoError(t, p.cmd.Process.Kill()) // kill -9: nothing settles
	select {
	case err := <-p.exited:
		require.Error(t, err, "killed, not exited")
	case <-time.After(15 * time.Second):
		t.Fatal("the process did not die")
	}

	sk.FinishAll()
	again := startLocal(t, bin, env)
	n, err := strconv.Atoi(again.resumed)
	require.NoError(t, err, "the start says how many jobs it took back: %q", again.resumed)
	require.GreaterOrEqual(t, n, 1, "the jobs held when it was killed")
	for _, id := range ids {
		again.waitState(token, id, "done") // 45 s at most: far less than the lease
	}
}
