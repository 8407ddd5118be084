package job

import (
	"strings"
	"unicode"
)

// A job's file name is shown back to people: in the API's answers, on the
// upload page, in whatever a client prints it with. Some characters change
// what is shown instead of showing themselves, so they are kept out of it.
// Control characters (C0, DEL and C1: U+0000–U+001F, U+007F–U+009F) end a
// line in a log or drive a terminal (ESC [31m colours it, U+009B is the
// same escape in one character); the bidirectional overrides and isolates
// (U+202A–U+202E, U+2066–U+2069) turn what follows around, so that
// "a\u202Egpm.exe" reads as "aexe.mpg".

// UnsafeFilenameRune reports whether r may not be in a job's file name: a
// control character or a bidirectional override or isolate.
func UnsafeFilenameRune(r rune) bool {
	return unicode.IsControl(r) || ('\u202A' <= r && r <= '\u202E') || ('\u2066' <= r && r <= '\u2069')
}

// CleanFilename is name without the characters UnsafeFilenameRune names
// (invalid UTF-8 becomes U+FFFD) and without the spaces that leaves at
// either end. It is for a name the service takes as it comes, a Telegram
// file's, where refusing the name would refuse the file; the API refuses
// such a name instead.
func CleanFilename(name string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if UnsafeFilenameRune(r) {
			return -1
		}
		return r
	}, name))
}
