// Package oggtest makes Ogg Opus streams for tests and the load model.
package oggtest

import (
	"bytes"
	"encoding/binary"

	"transcriber/internal/media/oggopus"
)

// Synth is a mono Ogg Opus stream of durationMs (rounded up to 20 ms) of
// silence: code 3 packets of six empty CELT frames (RFC 6716, 3.2.5). With
// sayMs > 0 the last granule lies that it is sayMs long.
func Synth(durationMs, sayMs int64) []byte { return synth(durationMs, sayMs, 1) }

// SynthChannels is Synth's truthful stream declaring 1 or 2 channels.
func SynthChannels(durationMs int64, channels int) []byte {
	return synth(durationMs, 0, byte(min(max(channels, 1), 2)))
}

func synth(durationMs, sayMs int64, channels byte) []byte {
	var out bytes.Buffer
	w := pageWriter{out: &out, serial: 0x7472616e}
	head := []byte("OpusHead")
	head = append(head, 1, channels, 0, 0) // version 1, its channels, no pre-skip
	head = binary.LittleEndian.AppendUint32(head, oggopus.SampleRate)
	head = append(head, 0, 0, 0) // no gain, channel mapping family 0
	w.page(0x02, 0, [][]byte{head})
	tags := []byte("OpusTags")
	tags = binary.LittleEndian.AppendUint32(tags, 0) // no vendor string
	tags = binary.LittleEndian.AppendUint32(tags, 0) // no comments
	w.page(0, 0, [][]byte{tags})

	frames := (durationMs + 19) / 20
	var granule int64
	var packets [][]byte
	for frames > 0 {
		n := min(frames, 6)
		frames -= n
		packets = append(packets, []byte{31<<3 | 3, byte(n)}) // CELT fullband 20 ms, code 3, n frames
		granule += n * 960
		if len(packets) == 255 || frames == 0 {
			flags := byte(0)
			g := granule
			if frames == 0 {
				flags = 0x04
				if sayMs > 0 {
					g = sayMs * oggopus.SampleRate / 1000
				}
			}
			w.page(flags, g, packets)
			packets = packets[:0]
		}
	}
	return out.Bytes()
}

// pageWriter writes pages of whole packets under 255 bytes.
type pageWriter struct {
	out    *bytes.Buffer
	serial uint32
	seq    uint32
}

func (w *pageWriter) page(flags byte, granule int64, packets [][]byte) {
	hdr := []byte("OggS\x00")
	hdr = append(hdr, flags)
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(granule))
	hdr = binary.LittleEndian.AppendUint32(hdr, w.serial)
	hdr = binary.LittleEndian.AppendUint32(hdr, w.seq)
	hdr = append(hdr, 0, 0, 0, 0, byte(len(packets)))
	w.seq++
	var body []byte
	for _, p := range packets {
		hdr = append(hdr, byte(len(p)))
		body = append(body, p...)
	}
	page := append(hdr, body...)
	binary.LittleEndian.PutUint32(page[22:26], oggopus.PageCRC(page))
	w.out.Write(page)
}
