// Package oggopus measures an Ogg Opus stream by what it holds: each
// packet's length from its TOC byte (RFC 6716, 3.1), never from granule
// positions or headers, which a file sets at will. Every byte the pipeline
// submits passes a Meter, so the seconds submitted are those recognized.
package oggopus

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// SampleRate is Opus's counting rate (RFC 7845, 4).
const SampleRate = 48000

// maxPacketSamples is 120 ms (RFC 6716, 3.2.5).
const maxPacketSamples = 120 * SampleRate / 1000

// ErrMalformed on the service's own ffmpeg output is a bug to fail loudly on.
var (
	ErrOverLimit = errors.New("oggopus: the stream holds more audio than its limit")
	ErrMalformed = errors.New("oggopus: not an Ogg Opus stream")
)

// Meter counts the audio of an Ogg Opus stream written to it. The write
// past LimitMs fails with ErrOverLimit, so a writer behind it never gets
// that page. It holds at most a page and one write.
type Meter struct {
	LimitMs int64 // 0: no limit

	buf     []byte
	samples int64
	streams map[uint32]*stream
	err     error
}

// stream assembles one logical stream's packets across pages.
type stream struct {
	packets int    // completed, the two headers included
	head    []byte // the open packet's first bytes, up to keep
	size    int    // its bytes so far
	open    bool   // it continues on the next page
}

// page adds a page's segments, calling done as each packet ends with the
// index of its last lacing value.
func (s *stream) page(lacing, body []byte, keep int, done func(i int) error) error {
	for i, l := range lacing {
		seg := body[:l]
		body = body[l:]
		if len(s.head) < keep {
			s.head = append(s.head, seg[:min(len(seg), keep-len(s.head))]...)
		}
		s.size += int(l)
		if s.open = l == 255; s.open {
			continue
		}
		s.packets++
		if err := done(i); err != nil {
			return err
		}
		s.head, s.size = s.head[:0], 0
	}
	return nil
}

// Write parses what it can of p; after an error every Write fails.
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
		m.buf = nil // let a large array go
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

// Ms is the audio counted so far, rounded up.
func (m *Meter) Ms() int64 { return samplesMs(m.samples) }

func samplesMs(n int64) int64 { return (n*1000 + SampleRate - 1) / SampleRate }

// page parses the page at b's start and returns its length; 0 until whole.
func (m *Meter) page(b []byte) (int, error) {
	if len(b) < 27 {
		return 0, nil
	}
	if string(b[:4]) != "OggS" || b[4] != 0 {
		return 0, fmt.Errorf("%w: no Ogg page where one should start", ErrMalformed)
	}
	size, lacing, body := pageAt(b)
	if size == 0 {
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
	if err := s.page(lacing, body, 2, func(int) error { return m.packet(s) }); err != nil {
		return 0, err
	}
	return size, nil
}

// pageAt splits the page at b's start; size is 0 while b holds no whole page.
func pageAt(b []byte) (size int, lacing, body []byte) {
	if len(b) < 27 || len(b) < 27+int(b[26]) {
		return 0, nil, nil
	}
	lacing = b[27 : 27+int(b[26])]
	size = 27 + len(lacing)
	for _, l := range lacing {
		size += int(l)
	}
	if len(b) < size {
		return 0, nil, nil
	}
	return size, lacing, b[27+len(lacing) : size]
}

func (m *Meter) packet(s *stream) error {
	switch s.packets {
	case 1:
		if string(s.head) != "Op" {
			return fmt.Errorf("%w: the stream does not start with OpusHead", ErrMalformed)
		}
		return nil
	case 2:
		return nil // OpusTags
	}
	n, err := PacketSamples(s.head)
	if err != nil {
		return err
	}
	m.samples += int64(n)
	if m.LimitMs > 0 && m.samples*1000 > m.LimitMs*SampleRate {
		return fmt.Errorf("%w: over %d ms", ErrOverLimit, m.LimitMs)
	}
	return nil
}

// frameSamples is each TOC config's frame: SILK 10–60 ms, hybrid 10–20 ms, CELT 2.5–20 ms.
var frameSamples = [32]int{
	480, 960, 1920, 2880, 480, 960, 1920, 2880, 480, 960, 1920, 2880, 480, 960, 480, 960,
	120, 240, 480, 960, 120, 240, 480, 960, 120, 240, 480, 960, 120, 240, 480, 960,
}

// PacketSamples is a packet's length from its first two bytes (RFC 6716,
// 3.1: the TOC's config gives the frame size, its low bits the count, for
// code 3 in the second byte).
func PacketSamples(head []byte) (int, error) {
	if len(head) == 0 {
		return 0, nil
	}
	toc := head[0]
	frame, count := frameSamples[toc>>3], 1
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
