package ffmpeg

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// An uploaded file is the sender's bytes, and libavformat picks the
// demuxer from the bytes, not from the name. Some demuxers open further
// inputs named inside the file: an HLS or DASH playlist fetches its
// segments (from any URL: a 180-byte playlist made ffprobe ask cloud
// metadata services for credentials), ffconcat reads the files it lists
// (relative names resolve next to the input: another job's upload), SDP
// and RTSP open network streams, image2 reads numbered files. So every run
// reads its one input under two allow-lists, both built here:
//
//   - -format_whitelist names the only demuxers libavformat may use: plain
//     single-file containers of audio or video, none of which opens anything
//     but the input itself (see acceptedFormats). A file detected as any
//     other format is refused before its header is read ("Format not on
//     whitelist"), which Probe reports as ErrUnsupported;
//   - -protocol_whitelist names the only protocols: for a URL, its own
//     scheme and what that runs on (https,tls,tcp or http,tcp); for a path,
//     file alone.
//
// And the only URL ffmpeg is given is one on Config.InputOrigin, the
// storage's scheme and host: any other is refused before a binary runs.

// acceptedFormats are the formats a file may be in, as people name them,
// with the libavformat demuxers that read them. A demuxer is listed by one
// of its names: libavformat matches the whitelist against every name of a
// demuxer ("mov" admits "mov,mp4,m4a,3gp,3g2,mj2"), and so does
// allowedDemuxer.
//
// Besides the formats phones, messengers and browsers record in
// (OGG/Opus, MP3, WAV, M4A, AMR, AAC, WebM), the list takes the other
// plain containers people keep speech in: FLAC (lossless archives), AIFF
// and CAF (Apple's recorders), ASF (WMA and WMV from Windows recorders and
// dictaphones), AVI (cameras), Matroska (MKV video), W64 (WAV past 4 GB
// from field recorders; RF64 is read by the wav demuxer). Each reads a single file
// and opens nothing else (the mov demuxer could follow external data
// references, but only with enable_drefs, which is off by default).
// Left out: playlists and manifests (hls, dash, concat, webm_dash_manifest),
// network descriptions (sdp, rtsp, rtp), image sequences and single
// images (image2, *_pipe), subtitles, which can reference other files or
// are not sound, and raw or rare formats that libavformat detects with a
// low score, so that random bytes are not taken for media.
var acceptedFormats = []struct {
	label    string   // the name people know
	demuxers []string // the demuxers that read it
}{
	{"OGG/Opus", []string{"ogg"}},
	{"MP3", []string{"mp3"}},
	{"WAV", []string{"wav", "w64"}},
	{"FLAC", []string{"flac"}},
	{"M4A/MP4/MOV/3GP", []string{"mov"}},
	{"WebM/MKV", []string{"matroska"}},
	{"AAC", []string{"aac"}},
	{"AMR", []string{"amr"}},
	{"AIFF", []string{"aiff"}},
	{"CAF", []string{"caf"}},
	{"WMA/WMV", []string{"asf"}},
	{"AVI", []string{"avi"}},
}

// rawData is the demuxer isEmpty reads any bytes with; it is allowed for
// that one call only.
const rawData = "data"

// allowedDemuxers is the set of demuxer names in acceptedFormats;
// formatWhitelist, ffmpeg's -format_whitelist: the same names, with commas;
// acceptedLabels, acceptedFormats for people: "OGG/Opus, MP3, …". They are
// variables with initializers (not set by init) because ErrUnsupported's
// message is made from acceptedLabels.
var allowedDemuxers, formatWhitelist, acceptedLabels = allowList()

func allowList() (set map[string]bool, whitelist, labels string) {
	set = map[string]bool{}
	var names, people []string
	for _, f := range acceptedFormats {
		people = append(people, f.label)
		for _, d := range f.demuxers {
			set[d] = true
			names = append(names, d)
		}
	}
	return set, strings.Join(names, ","), strings.Join(people, ", ")
}

// allowedDemuxer returns the name to force with -f for a demuxer that
// ffprobe reported by its names ("mov,mp4,m4a,3gp,3g2,mj2" gives "mov"),
// and whether it is allowed at all: as libavformat matches the whitelist,
// one of its comma-separated names must be in acceptedFormats.
func allowedDemuxer(formatName string) (string, bool) {
	names := strings.Split(formatName, ",")
	for _, n := range names {
		if allowedDemuxers[n] {
			return names[0], true
		}
	}
	return "", false
}

// normalOrigin returns u's scheme://host[:port], lower-case, with the
// scheme's default port dropped, and whether u is a plain http(s) URL
// (no user, no opaque part) that has one.
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

// OriginOf returns the origin (scheme://host[:port]) of an http(s) URL,
// as Config.InputOrigin takes it: for the storage's, from one of its
// presigned URLs, so that path-style and virtual-hosted addressing give
// the host ffmpeg will really be sent to.
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

// checkInputURL refuses a URL that is not on Config.InputOrigin, or that
// ffmpeg might read differently from Go (a backslash, spaces, control
// characters), and returns its scheme. The URL is ours, presigned by the
// storage adapter, so a refusal is a deployment bug: ErrInputRefused,
// Internal. Its cause names the URL's origin, never its query (the
// signature).
func (m *Media) checkInputURL(input string) (string, error) {
	if strings.ContainsAny(input, "\\") || strings.IndexFunc(input, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return "", wrap(ErrInputRefused, fmt.Errorf("input URL has characters a URL does not hold"), "")
	}
	u, err := url.Parse(input)
	if err != nil {
		return "", wrap(ErrInputRefused, fmt.Errorf("input URL does not parse"), "")
	}
	origin, ok := normalOrigin(u)
	if !ok {
		return "", wrap(ErrInputRefused, fmt.Errorf("input URL %s://%s is not a plain http(s) URL", u.Scheme, u.Host), "")
	}
	if m.cfg.InputOrigin == "" || origin != m.cfg.InputOrigin { // normalized by New
		return "", wrap(ErrInputRefused, fmt.Errorf("input URL on %s, but only %q may be read", origin, m.cfg.InputOrigin), "")
	}
	return strings.ToLower(u.Scheme), nil
}

// isURL reports whether input is read over HTTP rather than from disk.
func isURL(input string) bool {
	lower := strings.ToLower(input)
	return strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://")
}

// inputArgs are the options in front of the input, -i, and the input as
// ffmpeg must see it: the one place that says how ffmpeg and ffprobe open
// what they read. format is the demuxer to force with -f: "" lets
// libavformat detect one among acceptedFormats; a name ffprobe reported
// (Probe.Container) must be one of them; rawData reads the input as plain
// bytes (isEmpty), the one call where that demuxer is allowed.
//
// A URL must be on Config.InputOrigin (ErrInputRefused otherwise, before
// anything runs); it is re-opened where a read breaks (-reconnect resumes
// with a Range request at the offset it reached, so it keeps seeking
// intact; -reconnect_streamed is left off, because restarting a stream
// that cannot seek would feed ffmpeg the file's start twice), and has an
// I/O timeout. A path is read only as a file, with a "file:" prefix so a
// name with a colon or a leading dash is never taken for something else.
func (m *Media) inputArgs(input, format string) ([]string, error) {
	formats := formatWhitelist
	switch format {
	case "":
	case rawData:
		formats = rawData
	default:
		name, ok := allowedDemuxer(format)
		if !ok {
			return nil, wrap(ErrUnsupported, fmt.Errorf("format %q is not accepted", format), "")
		}
		format = name
	}

	protocols, target := "file", "file:"+input
	var network []string
	if isURL(input) {
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
