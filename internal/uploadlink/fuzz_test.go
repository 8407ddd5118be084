package uploadlink

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzValid: whatever token a link carries, Valid never panics and accepts
// only the token Token makes for that job under that secret; that token is
// accepted, survives the link's URL, and is refused once any one byte of it
// is changed, for another job or under another secret.
func FuzzValid(f *testing.F) {
	secret := strings.Repeat("s", MinSecretLen)
	const id = "01jf0000000000000000000000"
	f.Add([]byte(secret), id, Token([]byte(secret), id), uint8(0), byte('A'))
	f.Add([]byte(secret), id, "", uint8(21), byte('_'))
	f.Add([]byte(secret), id, Token([]byte(secret), id)+"=", uint8(3), byte(0))
	f.Add([]byte("x"), "", "\xff\x00", uint8(255), byte(0xff))
	f.Fuzz(func(t *testing.T, secret []byte, id, token string, pos uint8, b byte) {
		if Valid(secret, id, token) && token != Token(secret, id) {
			t.Fatalf("accepted %q, not the issued token", token)
		}
		if len(secret) == 0 {
			if Valid(secret, id, Token(secret, id)) {
				t.Fatal("accepted a token with no secret")
			}
			return
		}
		issued := Token(secret, id)
		if !Valid(secret, id, issued) {
			t.Fatalf("refused the issued token %q", issued)
		}
		link, err := url.Parse(URL("https://api.example/", secret, id))
		if err != nil {
			t.Fatalf("link does not parse: %v", err)
		}
		if got := link.Query().Get("t"); !Valid(secret, id, got) {
			t.Fatalf("the link's token %q is refused", got)
		}
		changed := []byte(issued)
		i := int(pos) % len(changed)
		if changed[i] == b {
			b++
		}
		changed[i] = b
		if Valid(secret, id, string(changed)) {
			t.Fatalf("accepted %q, the issued token with byte %d changed", changed, i)
		}
		if Valid(secret, id+"0", issued) {
			t.Fatal("accepted another job's token")
		}
		// Not a longer secret: HMAC pads short keys with zero bytes, so
		// "k" and "k\x00" are one key.
		other := append([]byte(nil), secret...)
		other[0] ^= 1
		if Valid(other, id, issued) {
			t.Fatal("accepted a token under another secret")
		}
	})
}
