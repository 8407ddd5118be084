package ffmpeg

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// libavformat picks a demuxer from the bytes, and some open further inputs
// named in the file: HLS and DASH fetch any URL (a 180-byte playlist made
// ffprobe ask cloud metadata for credentials), ffconcat reads listed files,
// SDP and RTSP open streams, image2 reads numbered files. So every run has
// -format_whitelist (acceptedFormats; others fail as ErrUnsupported before
// their header is read) and -protocol_whitelist (the URL's own scheme
// stack, or file alone), and a URL must be on Config.InputOrigin.

// acceptedFormats are plain single-file containers that open nothing else
// (mov's external references need enable_drefs, off by default). Left out:
// playlists, network descriptions, images, subtitles, and formats detected
// with a low score, so random bytes are not taken for media. libavformat
// matches any of a demuxer's names ("mov" admits "mov,mp4,m4a,…").
var acceptedFormats = [][2]string{ // label, demuxers
	{"OGG/Opus", "ogg"}, {"MP3", "mp3"}, {"WAV", "wav,w64"}, {"FLAC", "flac"},
	{"M4A/MP4/MOV/3GP", "mov"}, {"WebM/MKV", "matroska"}, {"AAC", "aac"}, {"AMR", "amr"},
	{"AIFF", "aiff"}, {"CAF", "caf"}, {"WMA/WMV", "asf"}, {"AVI", "avi"},
}

// rawData is isEmpty's demuxer, allowed for that call only.
const rawData = "data"

// Initializers, not init: ErrUnsupported's message uses acceptedLabels.
var allowedDemuxers, formatWhitelist, acceptedLabels = allowList()

func allowList() (set map[string]bool, whitelist, labels string) {
	set = map[string]bool{}
	var names, people []string
	for _, f := range acceptedFormats {
		people = append(people, f[0])
		names = append(names, f[1])
		for _, d := range strings.Split(f[1], ",") {
			set[d] = true
		}
	}
	return set, strings.Join(names, ","), strings.Join(people, ", ")
}

// allowedDemuxer returns the -f name for ffprobe's format_name
// ("mov,mp4,…" gives "mov") if any of its names is accepted.
func allowedDemuxer(formatName string) (string, bool) {
	names := strings.Split(formatName, ",")
	if slices.ContainsFunc(names, func(n string) bool { return allowedDemuxers[n] }) {
		return names[0], true
	}
	return "", false
}

// normalOrigin is u's lower-case scheme://host[:port] without a default
// port, if u is a plain http(s) URL.
func normalOrigin(u *url.URL) (string, bool) {
	scheme := strings.ToLower(u.Scheme)
	if (scheme != "http" && scheme != "https") || u.Opaque != "" || u.User != nil || u.Host == "" {
		return "", false
	}
	host := strings.ToLower(u.Host)
	if h, port, err := net.SplitHostPort(host); err == nil &&
		((scheme == "https" && port == "443") || (scheme == "http" && port == "80")) {
		host = h
		if strings.Contains(h, ":") {
			host = "[" + h + "]"
		}
	}
	return scheme + "://" + host, true
}

// OriginOf is a URL's origin as Config.InputOrigin takes it; take it from
// a presigned URL, so that the addressing style gives the real host.
func OriginOf(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("origin of a URL: %w", err)
	}
	o, ok := normalOrigin(u)
	if !ok {
		return "", fmt.Errorf("origin of a URL: %s://%s is not a plain http(s) URL", u.Scheme, u.Host)
	}
	return o, nil
}

// checkInputURL returns the scheme of a URL on Config.InputOrigin that
// ffmpeg reads as Go does (no backslash, space or control character). The
// cause names the origin, never the query (the signature).
func (m *Media) checkInputURL(input string) (string, error) {
	if strings.ContainsAny(input, "\\") || strings.IndexFunc(input, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return "", wrap(ErrInputRefused, fmt.Errorf("input URL has characters a URL does not hold"))
	}
	u, err := url.Parse(input)
	if err != nil {
		return "", wrap(ErrInputRefused, fmt.Errorf("input URL does not parse"))
	}
	origin, ok := normalOrigin(u)
	if !ok {
		return "", wrap(ErrInputRefused, fmt.Errorf("input URL %s://%s is not a plain http(s) URL", u.Scheme, u.Host))
	}
	if m.cfg.InputOrigin == "" || origin != m.cfg.InputOrigin { // normalized by New
		return "", wrap(ErrInputRefused, fmt.Errorf("input URL on %s, but only %q may be read", origin, m.cfg.InputOrigin))
	}
	return strings.ToLower(u.Scheme), nil
}

// inputArgs is the one place that says how ffmpeg and ffprobe open their
// input, up to and including -i. format is forced with -f: "" detects among
// acceptedFormats, a Probe.Container must be accepted, rawData is isEmpty's.
// A URL reconnects with a Range request where a read breaks
// (-reconnect_streamed stays off: a restarted unseekable stream would feed
// the start twice). A path gets "file:", so a colon or a dash is no option.
func (m *Media) inputArgs(input, format string) ([]string, error) {
	formats := formatWhitelist
	switch format {
	case "":
	case rawData:
		formats = rawData
	default:
		name, ok := allowedDemuxer(format)
		if !ok {
			return nil, wrap(ErrUnsupported, fmt.Errorf("format %q is not accepted", format))
		}
		format = name
	}

	protocols, target := "file", "file:"+input
	var network []string
	if lower := strings.ToLower(input); strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		scheme, err := m.checkInputURL(input)
		if err != nil {
			return nil, err
		}
		protocols, target = "http,tcp", input
		if scheme == "https" {
			protocols = "https,tls,tcp"
		}
		network = []string{
			"-reconnect", "1",
			"-reconnect_on_network_error", "1",
			"-reconnect_delay_max", fmt.Sprint(reconnectDelayMax),
			"-rw_timeout", fmt.Sprint(rwTimeout.Microseconds()),
		}
	}
	args := append([]string{"-protocol_whitelist", protocols, "-format_whitelist", formats}, network...)
	if format != "" {
		args = append(args, "-f", format)
	}
	return append(args, "-i", target), nil
}
