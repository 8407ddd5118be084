// Package oggopus measures the audio in an Ogg Opus stream by what it
// holds, not by what it says: each Opus packet's length comes from its own
// table-of-contents byte (RFC 6716, section 3.1), never from the granule
// positions or the header, which a file can set to anything. The pipeline
// counts every byte of audio it hands to the recognizer through a Meter,
// so the seconds submitted are the seconds recognized.
package oggopus

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// SampleRate is the rate Opus packet lengths are counted in (RFC 7845,
// section 4: granule positions and packet lengths are always at 48 kHz).
const SampleRate = 48000

// maxPacketSamples is the longest an Opus packet may be: 120 ms (RFC 6716,
// section 3.2.5).
const maxPacketSamples = 120 * SampleRate / 1000

// Errors. ErrOverLimit is the one a caller acts on: the stream holds more
// audio than the Meter's limit; the others say it is not an Ogg Opus
// stream this package can count, which for the service's own ffmpeg
// output is a bug to fail loudly on.
var (
	ErrOverLimit = errors.New("oggopus: the stream holds more audio than its limit")
	ErrMalformed = errors.New("oggopus: not an Ogg Opus stream")
)

// Meter is an io.Writer that reads an Ogg Opus stream as it is written and
// counts the audio in it. With a Limit, the write that carries the stream
// past it fails with ErrOverLimit, so a writer behind it (an upload) never
// gets that page. It keeps at most a page (64 KiB) and one write in memory.
type Meter struct {
	// LimitMs is the most audio the stream may hold, in milliseconds; 0
	// is no limit.
	LimitMs int64

	buf     []byte
	samples int64
	streams map[uint32]*stream
	err     error
}

// stream is one logical stream's packet state.
type stream struct {
	packets int    // packets completed: the first two are the headers
	head    []byte // the first bytes of the packet being read (up to 2)
	open    bool   // a packet is being read, to be continued on the next page
}

// Write parses what it can of p. It fails with ErrOverLimit once the audio
// passes LimitMs, or ErrMalformed; after an error every Write fails.
func (m *Meter) Write(p []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	m.buf = append(m.buf, p...)
	for {
		n, err := m.page(m.buf)
		if err != nil {
			m.err = err
			return 0, err
		}
		if n == 0 {
			break
		}
		m.buf = m.buf[n:]
	}
	if len(m.buf) == 0 {
		m.buf = nil // let a large backing array go
	}
	return len(p), nil
}

// Close reports whether the stream ended where a page ends.
func (m *Meter) Close() error {
	if m.err != nil {
		return m.err
	}
	if len(m.buf) > 0 {
		return fmt.Errorf("%w: %d bytes after the last whole page", ErrMalformed, len(m.buf))
	}
	return nil
}

// Samples is the audio counted so far, at 48 kHz.
func (m *Meter) Samples() int64 { return m.samples }

// Ms is the audio counted so far, in milliseconds rounded up.
func (m *Meter) Ms() int64 { return (m.samples*1000 + SampleRate - 1) / SampleRate }

// page parses the page at the start of b and returns its length, or 0 when
// b does not hold a whole page yet.
func (m *Meter) page(b []byte) (int, error) {
	if len(b) < 27 {
		return 0, nil
	}
	if string(b[:4]) != "OggS" || b[4] != 0 {
		return 0, fmt.Errorf("%w: no Ogg page where one should start", ErrMalformed)
	}
	nseg := int(b[26])
	if len(b) < 27+nseg {
		return 0, nil
	}
	lacing := b[27 : 27+nseg]
	size := 27 + nseg
	for _, l := range lacing {
		size += int(l)
	}
	if len(b) < size {
		return 0, nil
	}
	flags, serial := b[5], binary.LittleEndian.Uint32(b[14:18])
	if m.streams == nil {
		m.streams = map[uint32]*stream{}
	}
	s := m.streams[serial]
	if s == nil {
		if flags&0x02 == 0 {
			return 0, fmt.Errorf("%w: a page of stream %d before its first page", ErrMalformed, serial)
		}
		s = &stream{}
		m.streams[serial] = s
	}
	if continued := flags&0x01 != 0; continued != s.open {
		return 0, fmt.Errorf("%w: a page's continuation flag does not match the packet before it", ErrMalformed)
	}
	body := b[27+nseg : size]
	for _, l := range lacing {
		seg := body[:l]
		body = body[l:]
		if len(s.head) < 2 {
			s.head = append(s.head, seg[:min(len(seg), 2-len(s.head))]...)
		}
		s.open = l == 255
		if s.open {
			continue
		}
		if err := m.packet(s); err != nil {
			return 0, err
		}
	}
	return size, nil
}

// packet counts a completed packet of s.
func (m *Meter) packet(s *stream) error {
	head := s.head
	s.head = s.head[:0]
	s.packets++
	switch s.packets {
	case 1:
		if len(head) < 2 || string(head) != "Op" {
			return fmt.Errorf("%w: the stream does not start with OpusHead", ErrMalformed)
		}
		return nil
	case 2:
		return nil // OpusTags
	}
	n, err := PacketSamples(head)
	if err != nil {
		return err
	}
	m.samples += int64(n)
	if m.LimitMs > 0 && m.samples*1000 > m.LimitMs*SampleRate {
		return fmt.Errorf("%w: over %d ms", ErrOverLimit, m.LimitMs)
	}
	return nil
}

// PacketSamples is the length of an Opus packet at 48 kHz from its first
// two bytes (RFC 6716, section 3.1: the TOC byte's configuration gives the
// frame size, its last two bits the frame count, which for code 3 is in
// the second byte). An empty packet holds nothing.
func PacketSamples(head []byte) (int, error) {
	if len(head) == 0 {
		return 0, nil
	}
	toc := head[0]
	config := int(toc >> 3)
	var frame int
	switch {
	case config < 12: // SILK: 10, 20, 40, 60 ms
		frame = []int{480, 960, 1920, 2880}[config%4]
	case config < 16: // hybrid: 10, 20 ms
		frame = []int{480, 960}[config%2]
	default: // CELT: 2.5, 5, 10, 20 ms
		frame = []int{120, 240, 480, 960}[config%4]
	}
	count := 1
	switch toc & 3 {
	case 1, 2:
		count = 2
	case 3:
		if len(head) < 2 {
			return 0, fmt.Errorf("%w: a code 3 packet without its frame count", ErrMalformed)
		}
		count = int(head[1] & 0x3f)
	}
	if n := frame * count; n <= maxPacketSamples {
		return n, nil
	}
	return 0, fmt.Errorf("%w: a packet of %d frames of %d samples is over 120 ms", ErrMalformed, count, frame)
}
