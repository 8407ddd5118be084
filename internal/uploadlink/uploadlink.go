// Package uploadlink makes and checks the one-time links through which a
// Telegram user uploads a file too large for the bot to fetch (over 20 MB):
// a page served by the API function at /upload/{job_id}?t=<token>.
//
// The token is an HMAC-SHA256 of the job id under the installation's
// UPLOAD_LINK_SECRET, so a link names exactly one job and nothing is stored
// for it. It is one-time because the job is: the page gets a presigned PUT
// only while the job still awaits its file, so once the upload lands the
// link leads only to the job's progress.
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

// tokenBytes is how much of the HMAC a token carries: 128 bits.
const tokenBytes = 16

// Token is the link token for job id under secret.
func Token(secret []byte, id string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("transcriber upload link\x00"))
	m.Write([]byte(id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:tokenBytes])
}

// Valid reports, in constant time, whether token is job id's token under
// secret.
func Valid(secret []byte, id, token string) bool {
	if len(secret) == 0 {
		return false
	}
	return hmac.Equal([]byte(Token(secret, id)), []byte(token))
}

// Path is the page's path for job id, escaped as it goes into a URL (a job
// id needs no escaping; anything else stays one path segment).
func Path(id string) string { return "/upload/" + url.PathEscape(id) }

// URL is the link for job id: the page under base (the API's public URL)
// with the token in the query.
func URL(base string, secret []byte, id string) string {
	return strings.TrimRight(base, "/") + Path(id) + "?t=" + url.QueryEscape(Token(secret, id))
}
