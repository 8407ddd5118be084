// Package uploadlink makes and checks the links /upload/{job_id}?t=<token>
// for Telegram files over the bot's 20 MB. The token is an HMAC of the job
// id under UPLOAD_LINK_SECRET: nothing is stored. It is one-time because
// the job is: a presigned PUT only while the job awaits its file.
package uploadlink

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strings"
)

// MinSecretLen is the shortest secret taken, in bytes.
const MinSecretLen = 32

// tokenBytes: 128 bits of the HMAC.
const tokenBytes = 16

func Token(secret []byte, id string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("transcriber upload link\x00"))
	m.Write([]byte(id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:tokenBytes])
}

// Valid compares in constant time.
func Valid(secret []byte, id, token string) bool {
	if len(secret) == 0 {
		return false
	}
	return hmac.Equal([]byte(Token(secret, id)), []byte(token))
}

// Path escapes id so that anything stays one path segment.
func Path(id string) string { return "/upload/" + url.PathEscape(id) }

// URL is the link under base, the API's public URL.
func URL(base string, secret []byte, id string) string {
	return strings.TrimRight(base, "/") + Path(id) + "?t=" + url.QueryEscape(Token(secret, id))
}
