package uploadlink

import (
	"net/url"
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

// An id that is not a job id still stays one path segment, so the token
// stays in the query (a "#" or "?" in the path would move it).
func TestURLEscapesTheID(t *testing.T) {
	secret := []byte(strings.Repeat("a", MinSecretLen))
	for _, id := range []string{"#", "a?b", "x/y", "%zz"} {
		link, err := url.Parse(URL("https://api.example", secret, id))
		if err != nil {
			t.Fatalf("%q: %v", id, err)
		}
		if got := link.Query().Get("t"); !Valid(secret, id, got) {
			t.Errorf("%q: the link's token %q is refused", id, got)
		}
		if link.Path != "/upload/"+id {
			t.Errorf("%q: path %q", id, link.Path)
		}
	}
}
