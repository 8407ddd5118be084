package app

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestTelegramConfigFromEnv(t *testing.T) {
	secret := strings.Repeat("s", 40)
	c, err := FromEnv(envOf("TELEGRAM_BOT_TOKEN", "1:abc", "TELEGRAM_WEBHOOK_SECRET", "abc_DEF-123",
		"TELEGRAM_ALLOWED_USERS", "5, 7", "UPLOAD_LINK_SECRET", secret, "PUBLIC_URL", "https://x.example"))
	require.NoError(t, err)
	require.Equal(t, "1:abc", c.Telegram.Token)
	require.Equal(t, "https://api.telegram.org", c.Telegram.APIURL)
	require.True(t, c.Telegram.Allowed.Allows(7))
	require.False(t, c.Telegram.Allowed.Allows(6))
	require.Equal(t, []byte(secret), c.Telegram.UploadLinkSecret)

	_, err = FromEnv(envOf("TELEGRAM_ALLOWED_USERS", "alice"))
	require.ErrorContains(t, err, "TELEGRAM_ALLOWED_USERS")
	// With an owner too: the bad list is reported, not a panic.
	_, err = FromEnv(envOf("TELEGRAM_ALLOWED_USERS", "alice", "TELEGRAM_OWNER_ID", "42"))
	require.ErrorContains(t, err, "TELEGRAM_ALLOWED_USERS")

	_, err = FromEnv(envOf("UPLOAD_LINK_SECRET", "short-secret-value", "PUBLIC_URL", "https://x.example"))
	require.ErrorContains(t, err, "UPLOAD_LINK_SECRET")
	require.NotContains(t, err.Error(), "short-secret-value", "a secret is never echoed")

	_, err = FromEnv(envOf("UPLOAD_LINK_SECRET", secret))
	require.NoError(t, err, "without PUBLIC_URL the bot takes its address from the webhook request")
	_, err = FromEnv(envOf("PUBLIC_URL", "api.example"))
	require.ErrorContains(t, err, "PUBLIC_URL")

	_, err = FromEnv(envOf("TELEGRAM_BOT_TOKEN", "1:abc", "TELEGRAM_WEBHOOK_SECRET", "has spaces and !"))
	require.ErrorContains(t, err, "TELEGRAM_WEBHOOK_SECRET")
	require.NotContains(t, err.Error(), "has spaces")
}
