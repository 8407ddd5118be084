package job

import (
	"strings"
	"unicode"
)

// UnsafeFilenameRune reports whether r changes how a shown file name reads:
// a control character (ends a log line, drives a terminal) or a
// bidirectional override or isolate ("a\u202Egpm.exe" reads "aexe.mpg").
func UnsafeFilenameRune(r rune) bool {
	return unicode.IsControl(r) || ('\u202A' <= r && r <= '\u202E') || ('\u2066' <= r && r <= '\u2069')
}

// CleanFilename drops unsafe runes and trims, for a Telegram file's name,
// which cannot be refused; the API refuses such a name instead.
func CleanFilename(name string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if UnsafeFilenameRune(r) {
			return -1
		}
		return r
	}, name))
}
