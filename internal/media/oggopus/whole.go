package oggopus

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Whole is a whole Ogg Opus file that may go to a recognizer as it is.
type Whole struct {
	// Samples is what the packets hold, or the last granule when that says
	// up to a frame more.
	Samples  int64
	Channels int // 1 or 2
}

// Ms is the audio, rounded up.
func (w Whole) Ms() int64 { return samplesMs(w.Samples) }

// granuleSlack: end trimming (RFC 7845, 4.5) is under a packet; a second is generous.
const granuleSlack = SampleRate

// lastFrame: a writer that sets the last granule from its input's length
// counts the padded last frame whole.
const lastFrame = 20 * SampleRate / 1000

// Check reports whether b is a plain Ogg Opus file in which every reader
// finds the same length, so a recognizer billing by header, granules or
// packets bills no more than Samples: one logical stream; checksums and
// sequence right; no capture pattern but the pages' own; the
// identification header alone on the first page, family 0; the comment
// header next; audio packets RFC 6716 allows; nothing after an end page;
// every granule but the last exactly the audio ended so far, the last
// within granuleSlack below or lastFrame above. Else ErrMalformed, and
// ffmpeg converts the file.
func Check(b []byte) (Whole, error) {
	var (
		w       Whole
		serial  uint32
		preSkip int64
		st      stream // packets keep their first 19 bytes
		granule int64  // the last set
		ended   bool
		whole   = b
		seq     uint32
	)
	bad := func(format string, args ...any) (Whole, error) { return Whole{}, malformed(format, args...) }
	for ; len(b) > 0; seq++ {
		if ended {
			return bad("%d bytes after the page that ends the stream", len(b))
		}
		if len(b) < 27 || string(b[:4]) != "OggS" || b[4] != 0 {
			return bad("no Ogg page where page %d should start", seq)
		}
		flags := b[5]
		size, lacing, body := pageAt(b)
		if size == 0 {
			return bad("page %d cut short", seq)
		}
		page := b[:size]
		b = b[size:]
		if flags&^0x07 != 0 {
			return bad("page %d has unknown flags %#x", seq, flags)
		}
		if got, want := binary.LittleEndian.Uint32(page[22:26]), PageCRC(page); got != want {
			return bad("page %d's checksum is wrong", seq)
		}
		if seq == 0 {
			serial = binary.LittleEndian.Uint32(page[14:18])
		}
		switch {
		case binary.LittleEndian.Uint32(page[14:18]) != serial:
			return bad("more than one logical stream")
		case binary.LittleEndian.Uint32(page[18:22]) != seq:
			return bad("page %d is out of sequence", seq)
		case (flags&0x02 != 0) != (seq == 0):
			return bad("page %d begins a stream", seq)
		case (flags&0x01 != 0) != st.open:
			return bad("page %d's continuation flag does not match the packet before it", seq)
		}
		ended = flags&0x04 != 0
		before := st.packets
		err := st.page(lacing, body, 19, func(i int) error {
			pkt, size := st.head, st.size
			switch st.packets {
			case 1:
				// RFC 7845, 5.1: family 0's header is 19 bytes.
				if size != 19 || string(pkt[:8]) != "OpusHead" || pkt[8]>>4 != 0 {
					return malformed("the first packet is not an identification header")
				}
				if pkt[18] != 0 || pkt[9] < 1 || pkt[9] > 2 {
					return malformed("channel mapping family %d with %d channels", pkt[18], pkt[9])
				}
				w.Channels = int(pkt[9])
				preSkip = int64(binary.LittleEndian.Uint16(pkt[10:12]))
			case 2:
				if size < 16 || string(pkt[:8]) != "OpusTags" {
					return malformed("the second packet is not a comment header")
				}
				if i != len(lacing)-1 {
					return malformed("audio on the comment header's page")
				}
			default:
				n, err := PacketSamples(pkt)
				switch {
				case err != nil:
					return err
				case size == 0:
					return malformed("an empty audio packet")
				case pkt[0]&3 == 3 && (size < 2 || pkt[1]&0x3f == 0):
					return malformed("a code 3 audio packet without frames")
				}
				w.Samples += int64(n)
			}
			return nil
		})
		if err != nil {
			return Whole{}, err
		}
		// Header pages at granule 0, a page ending no packet at -1 (RFC 3533, 6).
		g := int64(binary.LittleEndian.Uint64(page[6:14]))
		switch {
		case seq == 0 && (st.packets != 1 || st.open):
			return bad("the first page holds more or less than the identification header")
		case st.packets == before && g != -1:
			return bad("page %d ends no packet and sets a granule position", seq)
		case st.packets == before:
		case st.packets <= 2 && g != 0:
			return bad("a header page has a granule position")
		case len(b) == 0 && g >= granule && g <= w.Samples+lastFrame:
			// The last page: short by end trimming (checked below), or a
			// frame over (Telegram for Android). The larger is the length.
			granule = g
			w.Samples = max(w.Samples, g)
		case g < granule || g > w.Samples:
			return bad("page %d's granule position %d is not within the audio before it", seq, g)
		case len(b) > 0 && g != w.Samples:
			// A reader may take the length from any page (RFC 7845, 4).
			return bad("page %d's granule position %d is not the %d samples its packets end at", seq, g, w.Samples)
		default:
			granule = g
		}
	}
	// ffprobe and opusfile find the last page searching back for the
	// capture pattern: a page hidden in a packet would be theirs. Real
	// audio holds it about once in 4 GB.
	if n := bytes.Count(whole, []byte("OggS")); n != int(seq) {
		return bad("%d capture patterns for %d pages: a page inside a packet", n, seq)
	}
	switch {
	case st.packets < 2:
		return bad("no headers")
	case st.open:
		return bad("the stream ends inside a packet")
	case w.Samples-granule > granuleSlack:
		return bad("the last granule position %d says much less than the %d samples the packets hold", granule, w.Samples)
	case w.Samples <= preSkip:
		return bad("no audio after the pre-skip")
	}
	return w, nil
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}

// crcTable is CRC-32, polynomial 0x04c11db7, not reflected (RFC 3533, 6).
var crcTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i) << 24
		for range 8 {
			if c&0x80000000 != 0 {
				c = c<<1 ^ 0x04c11db7
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// PageCRC is an Ogg page's checksum, its own checksum field read as zero.
func PageCRC(page []byte) uint32 {
	var c uint32
	for i, x := range page {
		if i >= 22 && i < 26 {
			x = 0
		}
		c = c<<8 ^ crcTable[byte(c>>24)^x]
	}
	return c
}
