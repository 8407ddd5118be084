package oggopus

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The streams below are written page by page, as a sender could, to test
// Check against files whose pages other readers would read differently.

// rawPage is an Ogg page of the given lacing and body, its checksum set.
func rawPage(flags byte, granule int64, seq uint32, lacing, body []byte) []byte {
	hdr := []byte("OggS\x00")
	hdr = append(hdr, flags)
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(granule))
	hdr = binary.LittleEndian.AppendUint32(hdr, 0x1234)
	hdr = binary.LittleEndian.AppendUint32(hdr, seq)
	hdr = append(hdr, 0, 0, 0, 0, byte(len(lacing)))
	page := append(append(hdr, lacing...), body...)
	seal(page)
	return page
}

func seal(page []byte) {
	binary.LittleEndian.PutUint32(page[22:26], 0)
	binary.LittleEndian.PutUint32(page[22:26], PageCRC(page))
}

// lace is a packet's lacing values.
func lace(n int) []byte {
	l := make([]byte, 0, n/255+1)
	for ; n >= 255; n -= 255 {
		l = append(l, 255)
	}
	return append(l, byte(n))
}

// packetPage is a page of whole packets.
func packetPage(flags byte, granule int64, seq uint32, pkts ...[]byte) []byte {
	var lacing, body []byte
	for _, p := range pkts {
		lacing = append(lacing, lace(len(p))...)
		body = append(body, p...)
	}
	return rawPage(flags, granule, seq, lacing, body)
}

// headerPages are a mono stream's identification and comment headers.
func headerPages() []byte {
	head := []byte("OpusHead")
	head = append(head, 1, 1, 0, 0) // version 1, mono, no pre-skip
	head = binary.LittleEndian.AppendUint32(head, SampleRate)
	head = append(head, 0, 0, 0)
	tags := []byte("OpusTags")
	tags = binary.LittleEndian.AppendUint32(tags, 0)
	tags = binary.LittleEndian.AppendUint32(tags, 0)
	return append(packetPage(0x02, 0, 0, head), packetPage(0, 0, 1, tags)...)
}

// frame is a 20 ms CELT packet (TOC config 31, code 0) of n bytes whose
// payload never holds an "OggS".
func frame(n int, seed byte) []byte {
	p := make([]byte, n)
	p[0] = 31 << 3
	x := uint32(seed)*2654435761 + 1
	for i := 1; i < n; i++ {
		x = x*1103515245 + 12345
		p[i] = byte(x>>16)&0x3f | 0x80
	}
	return p
}

// hiddenLastPage is 1.2 s of audio in two pages, with a third, valid page
// hidden inside the second's packets: it starts 990 bytes before the last
// page, covers that page's header and runs to the end of the file,
// claiming claimMs. ffprobe and opusfile take the length from the last
// page they find searching back from the end, which is the hidden one.
func hiddenLastPage(claimMs int64) []byte {
	var first, last [][]byte
	for i := range 10 {
		first = append(first, frame(1000, byte(i)))
	}
	for i := range 50 {
		last = append(last, frame(1200, byte(100+i)))
	}
	p1 := packetPage(0, 10*960, 2, first...)
	pn := packetPage(0x04, 60*960, 3, last...)
	all := append(append([]byte{}, p1...), pn...)
	at := len(p1) - 990
	size := len(all) - at
	var lacing []byte
	for body := size - 27; ; {
		n := len(lacing) + 1
		if body-n <= 255*n {
			lacing = make([]byte, n)
			rest := body - n
			for i := range lacing {
				lacing[i] = byte(min(rest, 255))
				rest -= int(lacing[i])
			}
			break
		}
		lacing = append(lacing, 0)
	}
	hidden := rawPage(0x04, claimMs*SampleRate/1000, 3, lacing, nil)
	copy(all[at:], hidden)
	seal(all[at:])
	seal(all[:len(p1)])
	return append(headerPages(), all...)
}

// A valid page hidden inside a packet, which other readers would take the
// length from, is refused; ffprobe, where it is installed, reads the
// hidden claim.
func TestCheckRefusesAPageHiddenInAPacket(t *testing.T) {
	b := hiddenLastPage(30_000)
	_, err := Check(b)
	require.ErrorIs(t, err, ErrMalformed)
	require.ErrorContains(t, err, "a page inside a packet")

	ffprobe, lookErr := exec.LookPath("ffprobe")
	if lookErr != nil {
		t.Skip("ffprobe is not installed (apt-get install ffmpeg): what it reads of the file is not checked")
	}
	path := filepath.Join(t.TempDir(), "hidden.ogg")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	out, err := exec.Command(ffprobe, "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path).Output()
	require.NoError(t, err)
	seconds, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	require.NoError(t, err)
	require.Greater(t, seconds, 20.0, "the lie this refuses: ffprobe reads the hidden page's 30 s in 1.2 s of packets")
}

// Before the last page a granule position is exactly what the packets
// ended so far hold: an early page that says less is refused (opusinfo
// would count both pages' audio again).
func TestCheckRefusesAnEarlyGranuleThatSaysLess(t *testing.T) {
	var pkts [][]byte
	for i := range 50 {
		pkts = append(pkts, frame(60, byte(i)))
	}
	b := append(headerPages(), packetPage(0, 1, 2, pkts...)...)
	b = append(b, packetPage(0x04, 100*960, 3, pkts...)...)
	_, err := Check(b)
	require.ErrorContains(t, err, "is not the 48000 samples its packets end at")
}

// What Telegram's clients write passes: with no page marked as the end
// (the iOS writer's last call adds no packet), and with the last granule
// position up to a frame past the packets (the Android writer's input
// length plus pre-skip), which is then the length.
func TestCheckPassesWhatTelegramsClientsWrite(t *testing.T) {
	var pkts [][]byte
	for i := range 50 {
		pkts = append(pkts, frame(60, byte(i)))
	}
	noEnd := append(headerPages(), packetPage(0, 50*960, 2, pkts...)...)
	w, err := Check(noEnd)
	require.NoError(t, err, "no page marked as the end")
	require.Equal(t, int64(50*960), w.Samples)

	over := append(headerPages(), packetPage(0x04, 50*960+311, 2, pkts...)...)
	w, err = Check(over)
	require.NoError(t, err, "the last granule 311 samples past the packets")
	require.Equal(t, int64(50*960+311), w.Samples, "the larger of the two is the length")

	tooFar := append(headerPages(), packetPage(0x04, 50*960+lastFrame+1, 2, pkts...)...)
	_, err = Check(tooFar)
	require.ErrorContains(t, err, "is not within the audio before it")
}

// Every rule of a page's place in the stream refuses a file that breaks
// it, with its reason.
func TestCheckRefusesPagesOutOfPlace(t *testing.T) {
	pkts := func(n int) [][]byte {
		var p [][]byte
		for i := range n {
			p = append(p, frame(60, byte(i)))
		}
		return p
	}
	audio := func(flags byte, granule int64, seq uint32, n int) []byte {
		return packetPage(flags, granule, seq, pkts(n)...)
	}
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	head := headerPages()
	idHead := head[:27+1+19]
	tagsPage := head[27+1+19:]
	longHead := append(append([]byte{}, idHead[27+1:]...), 0)
	tags := tagsPage[27+1:]
	// A packet of 300 bytes, begun on one page and continued on the next.
	big := frame(300, 7)
	begun := rawPage(0, -1, 2, []byte{255}, big[:255])
	continued := rawPage(0x01|0x04, 960, 3, []byte{45}, big[255:])

	for name, c := range map[string]struct {
		b   []byte
		why string
	}{
		"an unknown flag":           {cat(head, audio(0x08|0x04, 5*960, 2, 5)), "unknown flags"},
		"a second page that begins": {cat(head, audio(0x02|0x04, 5*960, 2, 5)), "page 2 begins a stream"},
		"a continuation of nothing": {cat(head, audio(0x01|0x04, 5*960, 2, 5)), "continuation flag does not match"},
		"a continuation not marked": {cat(head, begun, rawPage(0x04, 960, 3, []byte{45}, big[255:])), "continuation flag does not match"},
		"the comment header on the first page": {cat(packetPage(0x02, 0, 0, idHead[27+1:], tags), audio(0x04, 5*960, 1, 5)),
			"the first page holds more or less than the identification header"},
		"a granule on a page that ends no packet": {cat(head, rawPage(0, 960, 2, []byte{255}, big[:255]), continued), "ends no packet and sets a granule position"},
		"a granule on a header page":              {cat(idHead, packetPage(0, 5, 1, tags), audio(0x04, 5*960, 2, 5)), "a header page has a granule position"},
		"the end inside a packet":                 {cat(head, begun), "the stream ends inside a packet"},
		"a last granule below an earlier one":     {cat(head, audio(0, 5*960, 2, 5), audio(0x04, 4*960, 3, 5)), "is not within the audio before it"},
		"an identification header of 20 bytes":    {cat(packetPage(0x02, 0, 0, longHead), tagsPage, audio(0x04, 5*960, 2, 5)), "not an identification header"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Check(c.b)
			require.ErrorIs(t, err, ErrMalformed)
			require.ErrorContains(t, err, c.why)
		})
	}
	// The pieces above are right when put together right.
	w, err := Check(cat(head, begun, continued))
	require.NoError(t, err)
	require.Equal(t, int64(960), w.Samples)
}
