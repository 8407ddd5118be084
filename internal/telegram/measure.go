package telegram

import (
	"fmt"
	"strings"
	"unicode/utf16"
)

// humanBytes writes 20 MB, 1.5 GB.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<30)), ".0") + " GB"
	case n >= 1<<20:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<20)), ".0") + " MB"
	}
	return fmt.Sprintf("%d KB", (n+1023)/1024)
}

// clip is s cut to at most n characters, with "…" when it was cut.
func clip(s string, n int) string {
	i := 0
	for at := range s {
		if i == n {
			return s[:at] + "…"
		}
		i++
	}
	return s
}

// utf16Len is s's length in UTF-16 code units, the Bot API's unit; a
// byte that is not UTF-8 counts one, as its U+FFFD.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// prefixUTF16 is s's longest prefix within limit UTF-16 code units.
func prefixUTF16(s string, limit int) string {
	n := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if n+w > limit {
			return s[:i]
		}
		n += w
	}
	return s
}
