package ffmpeg

import (
	"net/url"
	"regexp"
	"strings"
)

// A failed run is put in one of four classes by what ffmpeg printed, since
// its exit status is 1 whatever went wrong.
type failureClass int

const (
	unknownFailure failureClass = iota // retried as Internal; the log shows why
	networkFailure                     // reading the input broke on the way: retried
	dataFailure                        // the input is not media ffmpeg can read: given up
	refusedFormat                      // the input is in a format not allowed: given up
)

// refusedSigns are what libavformat prints when an allow-list stops it:
// "[hls @ 0x…] Format not on whitelist 'ogg,mp3,…'" for the input's own
// format, and "Protocol 'http' not on whitelist 'file'!" should a demuxer
// try to open another input. They come first: the refusal is the file's
// doing, whatever else was printed, and must never pass for a network
// failure, which would be retried.
var refusedSigns = []string{
	"not on whitelist",
}

// networkSigns are what ffmpeg 5.x prints when reading a URL fails: the
// libavformat http, tcp and tls contexts prefix their own lines, and the
// rest are the strerror texts and HTTP messages it reports for the input
// itself ("<input>: Server returned 403 Forbidden (access denied)"). An
// HTTP error is a network failure too: an expired presigned URL (403) is
// cured by the fresh URL the next attempt signs.
var networkSigns = []string{
	"[http @", "[https @", "[tcp @", "[tls @",
	"Server returned",
	"Stream ends prematurely",
	"Input/output error",
	"Connection refused",
	"Connection reset by peer",
	"Connection timed out",
	"Operation timed out",
	"Network is unreachable",
	"No route to host",
	"Failed to resolve hostname",
	"Temporary failure in name resolution",
	"Error in the pull function",
	"Error in the push function",
}

// dataSigns are what ffmpeg prints when the bytes it got are not media it
// can decode. They count only when no network sign is present: a stream cut
// short also ends in "Invalid data found".
var dataSigns = []string{
	"Invalid data found when processing input",
	"moov atom not found",
	"ould not find codec parameters", // "Could not" and "could not"
	"does not contain any stream",
	"matches no streams",
	"no decoder found",
	"Decoder (codec",
	"Error while decoding",
	"partial file",
	"EBML header parsing failed",
	"detected only with low score", // "Format mp3 detected only with low score of 1"
}

func classify(stderr string) failureClass {
	for _, s := range refusedSigns {
		if strings.Contains(stderr, s) {
			return refusedFormat
		}
	}
	for _, s := range networkSigns {
		if strings.Contains(stderr, s) {
			return networkFailure
		}
	}
	for _, s := range dataSigns {
		if strings.Contains(stderr, s) {
			return dataFailure
		}
	}
	return unknownFailure
}

// inputReadBroke reports whether a run that exited 0 stopped reading its
// input because of a network error. ffmpeg treats a read error like the end
// of the input (it prints "<input>: Input/output error" and finishes the
// output cleanly), so without this check a connection lost for good would
// pass as a complete, shorter recording. Other errors at the end of the
// input (a file cut short by its sender, a corrupt tail) are tolerated:
// what could be read is kept, and the stderr goes to Stats for the logs.
func inputReadBroke(stderr string) bool {
	for _, line := range strings.Split(stderr, "\n") {
		i := strings.Index(line, scrubbedInput+": ")
		if i < 0 {
			continue
		}
		if classify(line[i+len(scrubbedInput)+2:]) == networkFailure {
			return true
		}
	}
	return false
}

// scrubbedInput replaces the input in everything kept for logs.
const scrubbedInput = "<input>"

var (
	// urlPattern finds any http(s) URL ffmpeg might print besides the
	// input itself (a redirect target, a URL it rebuilt).
	urlPattern = regexp.MustCompile(`(?i)https?://[^\s'"<>]+`)
	// secretPattern finds query parameters that sign a URL, in case a
	// fragment of one survives without its scheme.
	secretPattern = regexp.MustCompile(`(?i)((?:x-amz-[a-z0-9-]+|signature|credential|token|sig|key)=)[^&\s'"]+`)
)

// scrub removes the input (a presigned URL with its signature, or a local
// path) from s: the exact input first, then its query string, any other
// URL, and any signing parameter left over.
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
