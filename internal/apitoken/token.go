// Package apitoken is the HTTP API's tokens. A secret ("trk_" and 32
// random bytes in base64url) is shown once; the store keeps only its
// SHA-256, so a database copy lets nobody in. The callback secret (Standard
// Webhooks "whsec_" form) signs the token's callbacks and is stored as it
// is, since signing needs it (docs/security.md).
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
	secretLen    = len(secretPrefix) + (secretBytes*8+5)/6
	hashLen      = sha256.Size * 2
)

// secretEncoding is strict, so one secret has one spelling.
var secretEncoding = base64.RawURLEncoding.Strict()

// Token is an API token's record.
type Token struct {
	ID        string
	Name      string // for people
	Hash      string // Hash of the secret
	CreatedAt time.Time
	RevokedAt time.Time // zero while live
	// CallbackSecret is empty on older tokens, whose jobs take no callback_url.
	CallbackSecret string
}

const callbackSecretPrefix = "whsec_"

func (t Token) Revoked() bool { return !t.RevokedAt.IsZero() }

// New makes a token and its secret, shown once. The trimmed name must be
// 1 to MaxNameLen printable characters; times are UTC milliseconds.
func New(name string, now time.Time) (Token, string, error) {
	name, err := checkName(name)
	if err != nil {
		return Token{}, "", err
	}
	if now.IsZero() {
		return Token{}, "", invalid("a token needs the time it is made")
	}
	raw := make([]byte, 2*secretBytes) // the secret's, then the callback secret's
	if _, err := rand.Read(raw); err != nil {
		return Token{}, "", fmt.Errorf("make token secrets: %w", err)
	}
	secret := secretPrefix + secretEncoding.EncodeToString(raw[:secretBytes])
	now = now.UTC().Truncate(time.Millisecond)
	return Token{ID: ident.NewAt(now), Name: name, Hash: Hash(secret), CreatedAt: now,
		CallbackSecret: callbackSecretPrefix + base64.StdEncoding.EncodeToString(raw[secretBytes:])}, secret, nil
}

// Hash is the stored form of a secret; 256 random bits need no slow hash.
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// LooksLikeSecret checks a secret's form, keeping other strings from the store.
func LooksLikeSecret(s string) bool {
	if len(s) != secretLen || !strings.HasPrefix(s, secretPrefix) {
		return false
	}
	raw, err := secretEncoding.DecodeString(s[len(secretPrefix):])
	return err == nil && len(raw) == secretBytes
}

// Same reports whether read is t as recorded, so a rerun Create answers
// success rather than ErrConflict.
func (t Token) Same(read Token) bool {
	return t.ID == read.ID && t.Hash == read.Hash && t.Name == read.Name &&
		t.CreatedAt.Truncate(time.Millisecond).Equal(read.CreatedAt.Truncate(time.Millisecond))
}

// Check is Create's validation (ErrInvalid).
func (t Token) Check() error {
	canon, idErr := ident.Parse(t.ID)
	name, nameErr := checkName(t.Name)
	switch {
	case t.ID == "":
		return invalid("a token needs an id")
	case idErr != nil || canon != t.ID:
		return invalid("a token's id must be a lower-case ULID")
	case !isHash(t.Hash):
		return invalid("a token's hash must be 64 lower-case hex digits")
	case nameErr != nil:
		return nameErr
	case name != t.Name:
		return invalid("a token's name must not start or end with spaces")
	case t.CreatedAt.IsZero():
		return invalid("a token needs the time it was made")
	case t.CallbackSecret != "" && !isCallbackSecret(t.CallbackSecret):
		return invalid("a token's callback secret must be whsec_ and 32 bytes of standard base64")
	}
	return nil
}

func isCallbackSecret(s string) bool {
	b64, ok := strings.CutPrefix(s, callbackSecretPrefix)
	raw, err := base64.StdEncoding.Strict().DecodeString(b64)
	return ok && err == nil && len(raw) == secretBytes
}

// ParseID: a malformed id is ErrNotFound, not echoed (it may be a pasted secret).
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
	if strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return "", invalid("a token's name must be printable text, on one line")
	}
	return name, nil
}

func isHash(s string) bool { return len(s) == hashLen && strings.Trim(s, "0123456789abcdef") == "" }

// invalid matches ErrInvalid with its own message.
func invalid(msg string) error { return errs.New(errs.Invalid, codeInvalid, msg) }
