package oggopus

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Whole is what Check found in a whole Ogg Opus file that may be sent to a
// recognizer as it is.
type Whole struct {
	// Samples is the audio, at 48 kHz: what its packets hold, counted as
	// the Meter counts it, or the last granule position when that says up
	// to a frame more.
	Samples int64
	// Channels is the identification header's channel count (1 or 2).
	Channels int
}

// Ms is the audio, in milliseconds rounded up.
func (w Whole) Ms() int64 { return (w.Samples*1000 + SampleRate - 1) / SampleRate }

// granuleSlack is how far the last granule position may fall short of the
// audio the packets hold: the encoder's padding, trimmed at the end (RFC
// 7845, section 4.5), is under a packet; a second is generous.
const granuleSlack = SampleRate

// lastFrame is how far the last granule position may pass the audio the
// packets hold: a writer that sets it from its input's length counts the
// last frame, padded by the encoder, whole (20 ms).
const lastFrame = 20 * SampleRate / 1000

// Check reads b, a whole file, and reports whether it is a plain Ogg Opus
// stream that any reader would find the same length in, so that it can go
// to a recognizer unconverted: one logical stream, every page's checksum
// right and its sequence unbroken, no capture pattern but the pages' own
// (a page hidden in a packet is what a reader searching back from the end
// would take the length from), the identification header alone on the
// first page with channel mapping family 0 (one or two channels), the
// comment header next, audio packets that RFC 6716 allows (at least a
// byte; a code 3 packet with at least one frame, at most 120 ms), nothing
// after a page marked as the end (a writer may mark none), and granule
// positions that are exactly the audio of the packets ended so far on
// every page but the last, whose may fall short of it by up to a second
// (end trimming) or pass it by up to a frame (a writer's rounding). The
// length is the larger of the packets' and the last granule position's;
// anything else is ErrMalformed with the reason, and the file is for
// ffmpeg to convert.
//
// A file that passes holds what its header, its granule positions and its
// packets all say, so a recognizer that bills by any of them bills no more
// than Samples.
func Check(b []byte) (Whole, error) {
	var (
		w       Whole
		serial  uint32
		preSkip int64
		packets int    // completed packets, the two headers included
		pkt     []byte // the packet being read, up to its first 19 bytes
		pktLen  int    // its length so far
		open    bool   // a packet continues on the next page
		granule int64  // the last granule position set
		ended   bool
		whole   = b
		seq     uint32
	)
	bad := func(format string, args ...any) (Whole, error) {
		return Whole{}, fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
	}
	for ; len(b) > 0; seq++ {
		if ended {
			return bad("%d bytes after the page that ends the stream", len(b))
		}
		if len(b) < 27 || string(b[:4]) != "OggS" || b[4] != 0 {
			return bad("no Ogg page where page %d should start", seq)
		}
		flags := b[5]
		nseg := int(b[26])
		if len(b) < 27+nseg {
			return bad("page %d cut short", seq)
		}
		size := 27 + nseg
		for _, l := range b[27 : 27+nseg] {
			size += int(l)
		}
		if len(b) < size {
			return bad("page %d cut short", seq)
		}
		page := b[:size]
		b = b[size:]
		if flags&^0x07 != 0 {
			return bad("page %d has unknown flags %#x", seq, flags)
		}
		if got, want := binary.LittleEndian.Uint32(page[22:26]), pageCRC(page); got != want {
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
		case (flags&0x01 != 0) != open:
			return bad("page %d's continuation flag does not match the packet before it", seq)
		}
		ended = flags&0x04 != 0
		before := packets
		body := page[27+nseg:]
		for i, l := range page[27 : 27+nseg] {
			seg := body[:l]
			body = body[l:]
			if len(pkt) < 19 {
				pkt = append(pkt, seg[:min(len(seg), 19-len(pkt))]...)
			}
			pktLen += int(l)
			if open = l == 255; open {
				continue
			}
			packets++
			switch packets {
			case 1:
				// RFC 7845, section 5.1: "OpusHead", version (major 0),
				// channels, pre-skip, input rate, gain, mapping family;
				// for family 0 that is all, 19 bytes.
				if pktLen != 19 || string(pkt[:8]) != "OpusHead" || pkt[8]>>4 != 0 {
					return bad("the first packet is not an identification header")
				}
				if pkt[18] != 0 || pkt[9] < 1 || pkt[9] > 2 {
					return bad("channel mapping family %d with %d channels", pkt[18], pkt[9])
				}
				w.Channels = int(pkt[9])
				preSkip = int64(binary.LittleEndian.Uint16(pkt[10:12]))
			case 2:
				if pktLen < 16 || string(pkt[:8]) != "OpusTags" {
					return bad("the second packet is not a comment header")
				}
				if i != nseg-1 {
					return bad("audio on the comment header's page")
				}
			default:
				n, err := PacketSamples(pkt)
				switch {
				case err != nil:
					return Whole{}, err
				case pktLen == 0:
					return bad("an empty audio packet")
				case pkt[0]&3 == 3 && (pktLen < 2 || pkt[1]&0x3f == 0):
					return bad("a code 3 audio packet without frames")
				}
				w.Samples += int64(n)
			}
			pkt, pktLen = pkt[:0], 0
		}
		// The identification header alone on the first page, the comment
		// header ending its own (RFC 7845, section 3), header pages at
		// granule position 0, and a page on which no packet ends at -1
		// (RFC 3533, section 6).
		g := int64(binary.LittleEndian.Uint64(page[6:14]))
		switch {
		case seq == 0 && (packets != 1 || open):
			return bad("the first page holds more or less than the identification header")
		case packets == before && g != -1:
			return bad("page %d ends no packet and sets a granule position", seq)
		case packets == before:
		case packets <= 2 && g != 0:
			return bad("a header page has a granule position")
		case len(b) == 0 && g >= granule && g <= w.Samples+lastFrame:
			// The last page: below the packets' end by the encoder's
			// padding (end trimming, checked below), or above it by a
			// writer's rounding of the last frame (Telegram for Android
			// writes the input's length and the pre-skip: up to a frame
			// more than its packets hold). The larger is the length.
			granule = g
			w.Samples = max(w.Samples, g)
		case g < granule || g > w.Samples:
			return bad("page %d's granule position %d is not within the audio before it", seq, g)
		case len(b) > 0 && g != w.Samples:
			// Before the last page a granule position is exactly the
			// audio of the packets ended so far (RFC 7845, section 4): a
			// reader that takes a stream's length from such a page, or
			// from the first one, must find what the packets say.
			return bad("page %d's granule position %d is not the %d samples its packets end at", seq, g, w.Samples)
		default:
			granule = g
		}
	}
	// Readers that take a stream's length from its last page (ffprobe,
	// opusfile) find that page by its capture pattern, from the end: a
	// valid page hidden inside a packet would be theirs and not this
	// reading's. Real audio holds the pattern about once in 4 GB.
	if n := bytes.Count(whole, []byte("OggS")); n != int(seq) {
		return bad("%d capture patterns for %d pages: a page inside a packet", n, seq)
	}
	switch {
	case packets < 2:
		return bad("no headers")
	case open:
		return bad("the stream ends inside a packet")
	case w.Samples-granule > granuleSlack:
		return bad("the last granule position %d says much less than the %d samples the packets hold", granule, w.Samples)
	case w.Samples <= preSkip:
		return bad("no audio after the pre-skip")
	}
	return w, nil
}

// crcTable is the Ogg checksum's table: CRC-32 with polynomial
// 0x04c11db7, not reflected (RFC 3533, section 6).
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

// pageCRC is the checksum of an Ogg page, its own checksum field read as
// zero.
func pageCRC(page []byte) uint32 {
	var c uint32
	for i, x := range page {
		if i >= 22 && i < 26 {
			x = 0
		}
		c = c<<8 ^ crcTable[byte(c>>24)^x]
	}
	return c
}
