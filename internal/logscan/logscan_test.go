package logscan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScanFindsEachKindOfSecret(t *testing.T) {
	leaks := []struct{ name, line string }{
		{"registered value", `{"msg":"x","error":"Get https://api.telegram.org/file/bot123:AAH-secret-token/f: EOF"}`},
		{"API token secret", `{"msg":"auth","header":"Bearer trk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde"}`},
		{"callback secret", `{"msg":"token made","callback_secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3RpYHDtZ5bA="}`},
		{"presigned URL", `{"error":"Put \"http://127.0.0.1:1/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=3f2a9c0d1e\": EOF"}`},
		{"escaped signature", `{"url":"/b/k%3FX-Amz-Signature%3D3f2a9c0d1e4b"}`},
		{"credential", `{"url":"/b/k?X-Amz-Credential=AKIDEXAMPLE%2F20261201%2Fru-central1%2Fs3%2Faws4_request"}`},
		{"authorization header", `{"auth":"AWS4-HMAC-SHA256 Credential=x, SignedHeaders=host, Signature=` +
			"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" + `"}`},
		{"upload link", `{"link":"https://api.example/upload/01m8qtr92f8q5wn5mp5vd1zntk?t=q83vEj2mHk0Xo1pZ"}`},
		{"S3 secret key", `{"config":"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}`},
	}
	for _, tc := range leaks {
		t.Run(tc.name, func(t *testing.T) {
			s := New().Secret("bot token", "123:AAH-secret-token").Secret("S3 secret key", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
			_, _ = s.Write([]byte(tc.line + "\n"))
			require.Len(t, s.Leaks(), 1)
		})
	}
}

func TestScanPassesScrubbedLines(t *testing.T) {
	s := New().Secret("bot token", "123:AAH-secret-token")
	log := s.Logger(t)
	log.Info("fine", "url", "https://api.telegram.org/bot<token>/getFile")
	log.Info("presigned", "input", "<input>", "key", "sources/01m8qtr92f8q5wn5mp5vd1zntk")
	log.Info("page", "path", "/upload/01m8qtr92f8q5wn5mp5vd1zntk")
	log.Info("token", "token_id", "01m8qtr92f8q5wn5mp5vd1zntk", "prefix", "trk_")
	require.Empty(t, s.Leaks())
}
