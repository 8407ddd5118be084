package apitoken_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/apitoken"
	"transcriber/internal/errs"
	"transcriber/internal/ident"
)

var at = time.Date(2026, 3, 1, 10, 0, 0, 123_456_789, time.FixedZone("MSK", 3*3600))

func TestNewMakesASecretOfTheDocumentedForm(t *testing.T) {
	tok, secret, err := apitoken.New("  laptop  ", at)
	require.NoError(t, err)

	require.True(t, strings.HasPrefix(secret, "trk_"), secret)
	require.Len(t, secret, 4+43)
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(secret, "trk_"))
	require.NoError(t, err)
	require.Len(t, raw, 32)
	require.True(t, apitoken.LooksLikeSecret(secret))

	require.Equal(t, "laptop", tok.Name, "the name is trimmed")
	require.Equal(t, apitoken.Hash(secret), tok.Hash, "the record holds the hash")
	require.NotContains(t, tok.Hash, secret)
	canon, err := ident.Parse(tok.ID)
	require.NoError(t, err)
	require.Equal(t, canon, tok.ID)
	idTime, err := ident.Time(tok.ID)
	require.NoError(t, err)
	require.True(t, idTime.Equal(at.Truncate(time.Millisecond)), "the id carries the creation time")
	require.Equal(t, at.UTC().Truncate(time.Millisecond), tok.CreatedAt, "UTC at millisecond precision")
	require.Equal(t, time.UTC, tok.CreatedAt.Location())
	require.False(t, tok.Revoked())
	require.NoError(t, tok.Check())
}

func TestNewSecretsAndIDsAreUnique(t *testing.T) {
	secrets, ids := map[string]bool{}, map[string]bool{}
	for i := 0; i < 1000; i++ {
		tok, secret, err := apitoken.New("t", at)
		require.NoError(t, err)
		require.False(t, secrets[secret], "secret %d repeats", i)
		require.False(t, ids[tok.ID], "id %d repeats", i)
		secrets[secret], ids[tok.ID] = true, true
	}
}

func TestNewChecksTheName(t *testing.T) {
	good := map[string]string{
		"plain":              "ci",
		"unicode":            "ноутбук Маши 🎙",
		"inner spaces":       "build server 2",
		"64 runes":           strings.Repeat("я", 64),
		"trimmed to 64":      " " + strings.Repeat("x", 64) + "\t\n",
		"punctuation":        `deploy: "prod" (eu)`,
		"sql is just text":   "x'; DROP TABLE api_tokens; --",
		"one printable rune": "·",
	}
	for what, name := range good {
		tok, _, err := apitoken.New(name, at)
		require.NoError(t, err, what)
		require.Equal(t, strings.TrimSpace(name), tok.Name, what)
	}
	bad := map[string]string{
		"empty":         "",
		"only spaces":   " \t\n ",
		"65 runes":      strings.Repeat("я", 65),
		"newline":       "a\nb",
		"tab":           "a\tb",
		"control":       "a\x00b",
		"escape":        "a\x1b[31mb",
		"invalid utf-8": "a\xffb",
		"bidi override": "a\u202eb",
	}
	for what, name := range bad {
		_, secret, err := apitoken.New(name, at)
		require.ErrorIs(t, err, apitoken.ErrInvalid, what)
		require.Equal(t, errs.Invalid, errs.KindOf(err), what)
		require.Equal(t, "token_invalid", errs.CodeOf(err), what)
		require.Empty(t, secret, what)
	}
	_, _, err := apitoken.New("ok", time.Time{})
	require.ErrorIs(t, err, apitoken.ErrInvalid, "a zero time")
}

func TestHashIsStableHexSHA256(t *testing.T) {
	// sha256("abc"), FIPS 180-2 appendix B.1.
	require.Equal(t, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", apitoken.Hash("abc"))
	_, secret, err := apitoken.New("t", at)
	require.NoError(t, err)
	require.Equal(t, apitoken.Hash(secret), apitoken.Hash(secret))
	require.NotEqual(t, apitoken.Hash(secret), apitoken.Hash(secret+"x"))
}

func TestLooksLikeSecret(t *testing.T) {
	_, secret, err := apitoken.New("t", at)
	require.NoError(t, err)
	body := strings.TrimPrefix(secret, "trk_")
	require.True(t, apitoken.LooksLikeSecret(secret))
	require.True(t, apitoken.LooksLikeSecret("trk_"+strings.Repeat("A", 43)))
	require.True(t, apitoken.LooksLikeSecret("trk_"+strings.Repeat("-", 42)+"w"), "all of base64url's alphabet")

	for what, s := range map[string]string{
		"empty":               "",
		"prefix alone":        "trk_",
		"no prefix":           body,
		"other prefix":        "trx_" + body,
		"upper-case prefix":   "TRK_" + body,
		"short":               secret[:len(secret)-1],
		"long":                secret + "A",
		"padded":              "trk_" + body[:42] + "=",
		"standard base64":     "trk_" + strings.Repeat("+", 42) + "A",
		"slash":               "trk_" + strings.Repeat("/", 42) + "A",
		"space":               "trk_" + strings.Repeat(" ", 43),
		"bearer scheme":       "Bearer " + secret[:40],
		"non-zero spare bits": "trk_" + strings.Repeat("A", 42) + "B",
		"a ulid":              ident.New(),
		"non-ascii":           "trk_" + strings.Repeat("я", 21) + "A",
	} {
		require.False(t, apitoken.LooksLikeSecret(s), what)
	}
}

func TestCheck(t *testing.T) {
	tok, _, err := apitoken.New("ci", at)
	require.NoError(t, err)
	require.NoError(t, tok.Check())
	revoked := tok
	revoked.RevokedAt = at
	require.NoError(t, revoked.Check(), "a revoked record may be stored")

	for what, change := range map[string]func(*apitoken.Token){
		"zero id":         func(t *apitoken.Token) { t.ID = "" },
		"malformed id":    func(t *apitoken.Token) { t.ID = "not-an-id" },
		"upper-case id":   func(t *apitoken.Token) { t.ID = strings.ToUpper(t.ID) },
		"zero hash":       func(t *apitoken.Token) { t.Hash = "" },
		"short hash":      func(t *apitoken.Token) { t.Hash = t.Hash[:63] },
		"upper-case hash": func(t *apitoken.Token) { t.Hash = strings.ToUpper(t.Hash) },
		"secret as hash":  func(t *apitoken.Token) { t.Hash = "trk_" + t.Hash[:43] },
		"empty name":      func(t *apitoken.Token) { t.Name = "" },
		"untrimmed name":  func(t *apitoken.Token) { t.Name = " ci" },
		"zero created":    func(t *apitoken.Token) { t.CreatedAt = time.Time{} },
	} {
		bad := tok
		change(&bad)
		require.ErrorIs(t, bad.Check(), apitoken.ErrInvalid, what)
	}
}

func TestParseID(t *testing.T) {
	id := ident.New()
	got, err := apitoken.ParseID(strings.ToUpper(id))
	require.NoError(t, err)
	require.Equal(t, id, got)

	_, secret, err := apitoken.New("t", at)
	require.NoError(t, err)
	for _, bad := range []string{"", "x", secret, id + "0"} {
		_, err := apitoken.ParseID(bad)
		require.ErrorIs(t, err, apitoken.ErrNotFound, bad)
		require.NotContains(t, err.Error(), secret)
	}
}

func TestRevoked(t *testing.T) {
	require.False(t, apitoken.Token{}.Revoked())
	require.True(t, apitoken.Token{RevokedAt: at}.Revoked())
}

// New makes a callback secret beside the token's secret: "whsec_" and the
// standard base64 of 32 random bytes, unlike for each token, and kept in
// the record (it must be usable to sign). Check refuses a malformed one
// and takes none (a token made before callbacks).
func TestNewMakesACallbackSecret(t *testing.T) {
	tok, secret, err := apitoken.New("ci", at)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(tok.CallbackSecret, "whsec_"), tok.CallbackSecret)
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(tok.CallbackSecret, "whsec_"))
	require.NoError(t, err)
	require.Len(t, raw, 32)
	require.NotContains(t, tok.CallbackSecret, secret[4:])
	other, _, err := apitoken.New("ci", at)
	require.NoError(t, err)
	require.NotEqual(t, tok.CallbackSecret, other.CallbackSecret)

	tok.CallbackSecret = ""
	require.NoError(t, tok.Check(), "a token made before callbacks")
	for _, bad := range []string{"whsec_", "whsec_AAAA", "trk_" + strings.Repeat("A", 43), "whsec_" + strings.Repeat("!", 44)} {
		tok.CallbackSecret = bad
		err := tok.Check()
		require.ErrorIs(t, err, apitoken.ErrInvalid, bad)
		require.Equal(t, errs.Invalid, errs.KindOf(err))
	}
}
