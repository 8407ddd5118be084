package clock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
)

func TestSystemIsUTC(t *testing.T) {
	require.Equal(t, time.UTC, clock.System().Now().Location())
}

func TestSystemRunsItsTimers(t *testing.T) {
	ran := make(chan struct{})
	clock.System().AfterFunc(time.Millisecond, func() { close(ran) })
	select {
	case <-ran:
	case <-time.After(20 * time.Second):
		t.Fatal("the timer never ran")
	}
}
