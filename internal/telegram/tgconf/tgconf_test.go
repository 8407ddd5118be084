package tgconf_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/telegram/tgconf"
)

func TestParseOwnerID(t *testing.T) {
	for v, want := range map[string]int64{"": 0, "  ": 0, "123456789": 123456789, " 42 ": 42} {
		got, err := tgconf.ParseOwnerID(v)
		require.NoError(t, err, "%q", v)
		require.Equal(t, want, got, "%q", v)
	}
	for _, v := range []string{"0", "-5", "abc", "1.5", "@owner", "99999999999999999999"} {
		_, err := tgconf.ParseOwnerID(v)
		require.ErrorContains(t, err, "TELEGRAM_OWNER_ID", "%q", v)
		require.NotContains(t, err.Error(), v, "the value is not echoed")
	}
}
