// Package apitoken is the HTTP API's tokens: how they are made, kept and
// checked.
//
// A token is a secret handed out once, when it is made ("trk_" and 43
// characters of unpadded base64url over 32 random bytes), and a record kept
// by a Store: its id, a name for people, when it was made and when it was
// revoked. The secret itself is never stored, only its hex SHA-256 (Hash), so
// a copy of the database lets nobody in. A presented secret is checked by
// Authenticate: its form first, with no store call, then the record of its
// hash, which must be live.
//
// Beside the secret, New makes the token's callback secret
// ("whsec_" and the standard base64 of 32 random bytes, the Standard
// Webhooks form): the key that signs the callbacks of the token's jobs
// (internal/callback). It is shown once with the secret, and stored as it
// is, since the service needs it to sign; docs/security.md says why that
// is acceptable.
//
// The package imports only errs and ident, like the job domain; stores
// (internal/store/sqlite) import it, never the reverse.
package apitoken

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"transcriber/internal/errs"
	"transcriber/internal/ident"
)

// MaxNameLen is the longest name a token may have, in characters.
const MaxNameLen = 64

const (
	secretPrefix = "trk_"
	secretBytes  = 32
	// secretLen is the length of a secret: the prefix and 43 characters of
	// unpadded base64url for 32 bytes.
	secretLen = len(secretPrefix) + (secretBytes*8+5)/6
	hashLen   = sha256.Size * 2
)

// secretEncoding is unpadded base64url that refuses non-zero trailing bits,
// so one secret has one spelling.
var secretEncoding = base64.RawURLEncoding.Strict()

// Token is an API token's record. The secret itself is never stored: only
// its hash.
type Token struct {
	ID        string    // a ULID made by ident; what people name the token by
	Name      string    // for people: whose or what the token is
	Hash      string    // hex SHA-256 of the secret (Hash)
	CreatedAt time.Time // when it was made, UTC, at millisecond precision
	RevokedAt time.Time // when it was revoked; zero while it is live
	// CallbackSecret signs the callbacks of the token's jobs: "whsec_"
	// and the standard base64 of 32 random bytes. Tokens made before
	// callbacks existed have none, and their jobs take no callback_url.
	CallbackSecret string
}

// callbackSecretPrefix begins a callback secret.
const callbackSecretPrefix = "whsec_"

// Revoked reports whether the token has been revoked.
func (t Token) Revoked() bool { return !t.RevokedAt.IsZero() }

// New makes a token named name at now and returns it with its secret, which
// is shown once and never again. The name is trimmed and must then be 1 to
// MaxNameLen printable characters, else ErrInvalid. The token's times are
// UTC at millisecond precision, as stores keep them.
func New(name string, now time.Time) (Token, string, error) {
	name, err := checkName(name)
	if err != nil {
		return Token{}, "", err
	}
	if now.IsZero() {
		return Token{}, "", invalid("a token needs the time it is made")
	}
	raw := make([]byte, secretBytes)
	if _, err := rand.Read(raw); err != nil {
		return Token{}, "", fmt.Errorf("make token secret: %w", err)
	}
	secret := secretPrefix + secretEncoding.EncodeToString(raw)
	key := make([]byte, secretBytes)
	if _, err := rand.Read(key); err != nil {
		return Token{}, "", fmt.Errorf("make callback secret: %w", err)
	}
	now = now.UTC().Truncate(time.Millisecond)
	return Token{ID: ident.NewAt(now), Name: name, Hash: Hash(secret), CreatedAt: now,
		CallbackSecret: callbackSecretPrefix + base64.StdEncoding.EncodeToString(key)}, secret, nil
}

// Hash returns the stored form of a secret: its SHA-256 in lower-case hex.
// A secret is 256 random bits, so a fast hash is enough: there is nothing
// to guess, unlike a password.
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// LooksLikeSecret reports whether s has the form of a secret: the prefix,
// the length, and base64url that decodes to 32 bytes. It is a cheap check
// that keeps any string from outside away from a store.
func LooksLikeSecret(s string) bool {
	if len(s) != secretLen || !strings.HasPrefix(s, secretPrefix) {
		return false
	}
	raw, err := secretEncoding.DecodeString(s[len(secretPrefix):])
	return err == nil && len(raw) == secretBytes
}

// Same reports whether a token read back is t as a store recorded it:
// the same id, hash, name and time of creation (at milliseconds). A store
// whose Create runs again after a commit whose answer was lost finds its
// own token so, and answers it made it, not ErrConflict.
func (t Token) Same(read Token) bool {
	return t.ID == read.ID && t.Hash == read.Hash && t.Name == read.Name &&
		t.CreatedAt.Truncate(time.Millisecond).Equal(read.CreatedAt.Truncate(time.Millisecond))
}

// Check reports whether t may be stored: a canonical id, a hash in the form
// Hash makes, a valid name and a creation time. A store calls it in Create;
// the error is ErrInvalid.
func (t Token) Check() error {
	if t.ID == "" {
		return invalid("a token needs an id")
	}
	if canon, err := ident.Parse(t.ID); err != nil || canon != t.ID {
		return invalid("a token's id must be a lower-case ULID")
	}
	if !isHash(t.Hash) {
		return invalid("a token's hash must be 64 lower-case hex digits")
	}
	name, err := checkName(t.Name)
	if err != nil {
		return err
	}
	if name != t.Name {
		return invalid("a token's name must not start or end with spaces")
	}
	if t.CreatedAt.IsZero() {
		return invalid("a token needs the time it was made")
	}
	if t.CallbackSecret != "" && !isCallbackSecret(t.CallbackSecret) {
		return invalid("a token's callback secret must be whsec_ and 32 bytes of standard base64")
	}
	return nil
}

// isCallbackSecret reports whether s has the form New makes.
func isCallbackSecret(s string) bool {
	if len(s) <= len(callbackSecretPrefix) || s[:len(callbackSecretPrefix)] != callbackSecretPrefix {
		return false
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(s[len(callbackSecretPrefix):])
	return err == nil && len(raw) == secretBytes
}

// ParseID reads a token's id from outside for a store: a malformed one names
// no token (ErrNotFound) and never reaches the store. The id is not echoed:
// a person may paste a secret where an id belongs.
func ParseID(id string) (string, error) {
	canon, err := ident.Parse(id)
	if err != nil {
		return "", ErrNotFound
	}
	return canon, nil
}

func checkName(name string) (string, error) {
	name = strings.TrimSpace(name)
	n := utf8.RuneCountInString(name)
	if n == 0 || n > MaxNameLen {
		return "", invalid(fmt.Sprintf("a token's name must be 1 to %d characters", MaxNameLen))
	}
	if !utf8.ValidString(name) {
		return "", invalid("a token's name must be UTF-8 text")
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return "", invalid("a token's name must be printable text, on one line")
		}
	}
	return name, nil
}

func isHash(s string) bool {
	if len(s) != hashLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// invalid is ErrInvalid with a message that says what is wrong; it matches
// ErrInvalid with errors.Is.
func invalid(msg string) error { return errs.New(errs.Invalid, codeInvalid, msg) }
