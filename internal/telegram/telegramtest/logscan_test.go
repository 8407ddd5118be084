package telegramtest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLogScanFindsTheToken(t *testing.T) {
	s := NewLogScan()
	log := s.Logger(t)
	log.Info("fine", "url", "https://api.telegram.org/bot<token>/getFile")
	require.Empty(t, s.Leaks())
	log.Warn("leak", "error", "Get \"https://api.telegram.org/file/bot"+Token+"/voice/file_1.oga\": EOF")
	require.Len(t, s.Leaks(), 1)
}
