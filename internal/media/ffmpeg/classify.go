package ffmpeg

import (
	"net/url"
	"regexp"
	"slices"
	"strings"

	"transcriber/internal/errs"
)

// refusedSign is an allow-list's refusal (format or protocol). It comes
// first: it is the file's doing and must never pass for a network failure.
const refusedSign = "not on whitelist"

// networkSigns are what ffmpeg 5.x prints when reading a URL fails; an HTTP
// error counts (an expired URL's 403 is cured by the next attempt's).
var networkSigns = []string{
	"[http @", "[https @", "[tcp @", "[tls @", "Server returned", "Stream ends prematurely",
	"Input/output error", "Connection refused", "Connection reset by peer", "Connection timed out",
	"Operation timed out", "Network is unreachable", "No route to host", "Failed to resolve hostname",
	"Temporary failure in name resolution", "Error in the pull function", "Error in the push function",
}

// dataSigns count only without a network sign: a stream cut short also
// ends in "Invalid data found".
var dataSigns = []string{
	"Invalid data found when processing input", "moov atom not found",
	"ould not find codec parameters", // "Could not" and "could not"
	"does not contain any stream", "matches no streams", "no decoder found", "Decoder (codec",
	"Error while decoding", "partial file", "EBML header parsing failed",
	"detected only with low score", // "Format mp3 detected only with low score of 1"
}

// classify is a failed run's error by what ffmpeg printed (it exits 1
// whatever happened); ErrFailed, retried as Internal, when nothing matches.
func classify(stderr string) *errs.Error {
	printed := func(sign string) bool { return strings.Contains(stderr, sign) }
	switch {
	case printed(refusedSign):
		return ErrUnsupported
	case slices.ContainsFunc(networkSigns, printed):
		return ErrSourceUnavailable
	case slices.ContainsFunc(dataSigns, printed):
		return ErrUnreadable
	}
	return ErrFailed
}

// inputReadBroke reports whether a run that exited 0 stopped on a network
// error: ffmpeg ends the output cleanly on a read error, so a lost
// connection would pass as a shorter recording. A corrupt tail is tolerated.
func inputReadBroke(stderr string) bool {
	for _, line := range strings.Split(stderr, "\n") {
		if _, msg, ok := strings.Cut(line, scrubbedInput+": "); ok && classify(msg) == ErrSourceUnavailable {
			return true
		}
	}
	return false
}

// scrubbedInput replaces the input in everything kept for logs.
const scrubbedInput = "<input>"

var (
	// urlPattern: a redirect target, a URL ffmpeg rebuilt.
	urlPattern = regexp.MustCompile(`(?i)https?://[^\s'"<>]+`)
	// secretPattern: signing parameters of a fragment without its scheme.
	secretPattern = regexp.MustCompile(`(?i)((?:x-amz-[a-z0-9-]+|signature|credential|token|sig|key)=)[^&\s'"]+`)
)

// scrub removes the input from s: itself, its query, any URL, any signing parameter.
func scrub(s, input string) string {
	if input == "" || s == "" {
		return s
	}
	s = strings.ReplaceAll(s, input, scrubbedInput)
	if u, err := url.Parse(input); err == nil && u.RawQuery != "" {
		s = strings.ReplaceAll(s, u.RawQuery, "<query>")
	}
	s = urlPattern.ReplaceAllString(s, "<url>")
	return secretPattern.ReplaceAllString(s, "${1}<redacted>")
}
