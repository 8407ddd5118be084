package uploadlink

import (
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	secret := []byte(strings.Repeat("a", MinSecretLen))
	other := []byte(strings.Repeat("b", MinSecretLen))
	const id = "01jf0000000000000000000000"
	tok := Token(secret, id)
	if len(tok) != 22 {
		t.Fatalf("token %q: want 22 characters (128 bits)", tok)
	}
	if !Valid(secret, id, tok) {
		t.Fatal("a job's own token is refused")
	}
	for name, bad := range map[string]bool{
		"other job":     Valid(secret, "01jf0000000000000000000001", tok),
		"other secret":  Valid(other, id, tok),
		"no secret":     Valid(nil, id, Token(nil, id)),
		"empty token":   Valid(secret, id, ""),
		"cut token":     Valid(secret, id, tok[:21]),
		"changed token": Valid(secret, id, "A"+tok[1:]),
	} {
		if bad {
			t.Errorf("%s: accepted", name)
		}
	}
	if got, want := URL("https://api.example/", secret, id), "https://api.example/upload/"+id+"?t="+tok; got != want {
		t.Fatalf("URL = %q, want %q", got, want)
	}
}
